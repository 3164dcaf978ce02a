#include "compiler/hlo/literal.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstring>
#include <mutex>
#include <vector>

#include <sanitizer/asan_interface.h>
#include <sys/mman.h>

#include "compiler/hlo/float_formats.h"

namespace kiln::hlo {
namespace {

template <typename F>
void AppendFloat(F v, std::string& out) {
  if (std::isnan(v)) {
    out += std::signbit(v) ? "-nan" : "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-inf" : "inf";
    return;
  }
  if (v == 0 && std::signbit(v)) {
    out += "-0.0";
    return;
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, end);
}

// NaN payloads of f32/f64 beyond the default quiet NaN are kept as
// nan(0x<payload>) so constants round-trip bit-exactly.
template <typename F, typename Bits>
void AppendWideFloat(F v, std::string& out) {
  if (std::isnan(v)) {
    constexpr int kMantissaBits = std::numeric_limits<F>::digits - 1;
    Bits bits = std::bit_cast<Bits>(v);
    Bits payload = bits & ((Bits{1} << kMantissaBits) - 1);
    if (std::signbit(v)) out += '-';
    out += "nan";
    if (payload != (Bits{1} << (kMantissaBits - 1))) {
      char buf[32];
      auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), payload, 16);
      out += "(0x";
      out.append(buf, end);
      out += ')';
    }
    return;
  }
  AppendFloat(v, out);
}

template <typename T>
void AppendInt(T v, std::string& out) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, end);
}

void AppendEmptyLevel(const std::vector<int64_t>& dims, size_t d, std::string& out) {
  out += '{';
  if (d + 1 < dims.size()) {
    for (int64_t i = 0; i < dims[d]; ++i) {
      if (i > 0) out += ", ";
      AppendEmptyLevel(dims, d + 1, out);
    }
  }
  out += '}';
}

void AppendArray(const Literal& lit, std::string& out) {
  const Shape& shape = lit.shape();
  if (shape.rank() == 0) {
    AppendLiteralElement(lit, 0, out);
    return;
  }
  if (lit.elided()) {
    out += "{...}";
    return;
  }
  const auto& dims = shape.dimensions();
  const int64_t rank = shape.rank();
  // Walk the elements in row-major order, opening and closing braces as the
  // multi-index rolls over.
  std::vector<int64_t> index(rank, 0);
  int64_t total = lit.element_count();
  for (int64_t d = 0; d < rank; ++d) out += '{';
  if (total == 0) {
    // No elements, but the nesting still shows every non-zero dimension
    // before the first zero one: s32[3,0] is {{}, {}, {}}.
    out.resize(out.size() - rank);
    AppendEmptyLevel(dims, 0, out);
    return;
  }
  for (int64_t i = 0; i < total; ++i) {
    AppendLiteralElement(lit, i, out);
    int64_t d = rank - 1;
    int closed = 0;
    while (d >= 0 && ++index[d] == dims[d]) {
      index[d] = 0;
      --d;
      ++closed;
    }
    for (int c = 0; c < closed; ++c) out += '}';
    if (d >= 0) {
      out += ", ";
      for (int c = 0; c < closed; ++c) out += '{';
    }
  }
}

// Large blocks are mapped in multiples of this size, so that blocks of
// similar sizes share a size class in the cache below.
constexpr size_t kLargeBlockGranule = size_t{2} << 20;
// Freed large blocks kept for reuse, at most this many bytes in all.
constexpr size_t kMaxCachedBlockBytes = size_t{256} << 20;

size_t RoundUpToGranule(size_t bytes) {
  return (bytes + kLargeBlockGranule - 1) / kLargeBlockGranule * kLargeBlockGranule;
}

size_t ArrayByteSize(const Shape& shape) {
  int64_t bytes = shape.ByteSize();
  return bytes > 0 ? static_cast<size_t>(bytes) : 0;
}

// Maps `size` bytes; nullptr when the kernel refuses. No MADV_HUGEPAGE: with
// THP in "madvise" mode the first touch then may compact memory directly,
// which measured 13-176 ms (against a steady 40 ms with 4 KiB pages) for a
// 64 MB result on a shared machine; reuse through the cache matters more.
void* MapLargeBlock(size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// Recently freed large blocks, oldest first. A process that evaluates the
// same program again gets its result's pages back without faulting them in
// and having the kernel zero them a second time.
class LargeBlockCache {
 public:
  void* Take(size_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      if (it->size != size) continue;
      void* p = it->p;
      cached_bytes_ -= size;
      blocks_.erase(it);
      return p;
    }
    return nullptr;
  }

  void Put(void* p, size_t size) {
    std::vector<Block> evicted;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (size > kMaxCachedBlockBytes) {
        evicted.push_back({p, size});
      } else {
        while (cached_bytes_ + size > kMaxCachedBlockBytes) {
          evicted.push_back(blocks_.front());
          cached_bytes_ -= blocks_.front().size;
          blocks_.erase(blocks_.begin());
        }
        blocks_.push_back({p, size});
        cached_bytes_ += size;
      }
    }
    for (const Block& b : evicted) {
      ASAN_UNPOISON_MEMORY_REGION(b.p, b.size);  // the address may be mapped again
      munmap(b.p, b.size);
    }
  }

 private:
  struct Block {
    void* p;
    size_t size;
  };
  std::mutex mu_;
  std::vector<Block> blocks_;
  size_t cached_bytes_ = 0;
};

// Never destroyed: literals may be freed by other static destructors.
LargeBlockCache& BlockCache() {
  static auto* cache = new LargeBlockCache();
  return *cache;
}

// Under AddressSanitizer (no-ops otherwise) a large block is poisoned beyond
// the bytes handed out and entirely while it waits in the cache, so reads
// past the end of a large literal or after its release are reported as they
// are for operator new's blocks.
void* HandOut(void* p, size_t bytes, size_t size) {
  ASAN_UNPOISON_MEMORY_REGION(p, bytes);
  ASAN_POISON_MEMORY_REGION(static_cast<uint8_t*>(p) + bytes, size - bytes);
  return p;
}

}  // namespace

void* AllocateLiteralBytes(size_t bytes) {
  if (bytes < kLiteralLargeBlockBytes) return ::operator new(bytes);
  const size_t size = RoundUpToGranule(bytes);
  if (void* p = BlockCache().Take(size)) return HandOut(p, bytes, size);
  if (void* p = MapLargeBlock(size)) return HandOut(p, bytes, size);
  throw std::bad_alloc();
}

void FreeLiteralBytes(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes < kLiteralLargeBlockBytes) {
    ::operator delete(p);
    return;
  }
  const size_t size = RoundUpToGranule(bytes);
  ASAN_POISON_MEMORY_REGION(p, size);
  BlockCache().Put(p, size);
}

Literal::Literal(Shape shape) : shape_(std::move(shape)) {
  data_.assign(ArrayByteSize(shape_), 0);
}

Literal Literal::Uninitialized(Shape shape) {
  Literal lit;
  lit.shape_ = std::move(shape);
  lit.data_.resize(ArrayByteSize(lit.shape_));
  return lit;
}

Literal Literal::Splat(Shape shape, const Literal& scalar) {
  Literal lit = Uninitialized(std::move(shape));
  const size_t element = scalar.data_.size();
  const size_t total = lit.data_.size();
  if (total == 0 || element == 0) return lit;
  // One element, then copies of what is filled so far: log2(count) copies
  // (an insert per element took 70% of the fuzzer's time under coverage).
  std::memcpy(lit.data_.data(), scalar.data_.data(), std::min(element, total));
  for (size_t filled = element; filled < total; filled *= 2) {
    std::memcpy(lit.data_.data() + filled, lit.data_.data(), std::min(filled, total - filled));
  }
  return lit;
}

Literal Literal::Tuple(std::vector<Literal> elements) {
  Literal lit;
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Literal& e : elements) shapes.push_back(e.shape());
  lit.shape_ = Shape::Tuple(std::move(shapes));
  lit.tuple_ = std::move(elements);
  return lit;
}

Literal Literal::Elided(Shape shape) {
  Literal lit;
  lit.shape_ = std::move(shape);
  lit.elided_ = true;
  return lit;
}

Literal Literal::FromData(Shape shape, LiteralBytes data) {
  Literal lit;
  lit.shape_ = std::move(shape);
  lit.data_ = std::move(data);
  return lit;
}

Literal Literal::FromData(Shape shape, const std::vector<uint8_t>& data) {
  return FromData(std::move(shape), LiteralBytes(data.begin(), data.end()));
}

int64_t Literal::element_count() const {
  int64_t width = HostByteWidth(shape_.element_type());
  return width == 0 ? 0 : static_cast<int64_t>(data_.size()) / width;
}

double Literal::GetAsDouble(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  if (const FloatFormat* f = NarrowFloatFormat(t)) {
    uint32_t bits = HostByteWidth(t) == 2 ? Get<uint16_t>(i) : Get<uint8_t>(i);
    return DecodeNarrowFloat(*f, bits);
  }
  switch (t) {
    case PrimitiveType::kPred: case PrimitiveType::kU1: case PrimitiveType::kU2:
    case PrimitiveType::kU4: case PrimitiveType::kU8:
      return Get<uint8_t>(i);
    case PrimitiveType::kS1: case PrimitiveType::kS2: case PrimitiveType::kS4:
    case PrimitiveType::kS8:
      return Get<int8_t>(i);
    case PrimitiveType::kS16: return Get<int16_t>(i);
    case PrimitiveType::kU16: return Get<uint16_t>(i);
    case PrimitiveType::kS32: return Get<int32_t>(i);
    case PrimitiveType::kU32: return Get<uint32_t>(i);
    case PrimitiveType::kS64: return static_cast<double>(Get<int64_t>(i));
    case PrimitiveType::kU64: return static_cast<double>(Get<uint64_t>(i));
    case PrimitiveType::kF32: return Get<float>(i);
    case PrimitiveType::kF64: return Get<double>(i);
    case PrimitiveType::kC64: return Get<float>(2 * i);
    case PrimitiveType::kC128: return Get<double>(2 * i);
    default: return 0;
  }
}

void AppendLiteralElement(const Literal& lit, int64_t i, std::string& out) {
  PrimitiveType t = lit.shape().element_type();
  if (lit.elided() || lit.data().empty()) {
    out += "...";
    return;
  }
  if (const FloatFormat* f = NarrowFloatFormat(t)) {
    uint32_t bits = HostByteWidth(t) == 2 ? lit.Get<uint16_t>(i) : lit.Get<uint8_t>(i);
    // Every narrow value is exact in float, whose shortest form parses back.
    AppendFloat(static_cast<float>(DecodeNarrowFloat(*f, bits)), out);
    return;
  }
  switch (t) {
    case PrimitiveType::kPred: out += lit.Get<uint8_t>(i) ? "true" : "false"; return;
    case PrimitiveType::kU1: case PrimitiveType::kU2: case PrimitiveType::kU4:
    case PrimitiveType::kU8: AppendInt(lit.Get<uint8_t>(i), out); return;
    case PrimitiveType::kS1: case PrimitiveType::kS2: case PrimitiveType::kS4:
    case PrimitiveType::kS8: AppendInt(lit.Get<int8_t>(i), out); return;
    case PrimitiveType::kS16: AppendInt(lit.Get<int16_t>(i), out); return;
    case PrimitiveType::kU16: AppendInt(lit.Get<uint16_t>(i), out); return;
    case PrimitiveType::kS32: AppendInt(lit.Get<int32_t>(i), out); return;
    case PrimitiveType::kU32: AppendInt(lit.Get<uint32_t>(i), out); return;
    case PrimitiveType::kS64: AppendInt(lit.Get<int64_t>(i), out); return;
    case PrimitiveType::kU64: AppendInt(lit.Get<uint64_t>(i), out); return;
    case PrimitiveType::kF32: AppendWideFloat<float, uint32_t>(lit.Get<float>(i), out); return;
    case PrimitiveType::kF64: AppendWideFloat<double, uint64_t>(lit.Get<double>(i), out); return;
    case PrimitiveType::kC64:
      out += '(';
      AppendWideFloat<float, uint32_t>(lit.Get<float>(2 * i), out);
      out += ", ";
      AppendWideFloat<float, uint32_t>(lit.Get<float>(2 * i + 1), out);
      out += ')';
      return;
    case PrimitiveType::kC128:
      out += '(';
      AppendWideFloat<double, uint64_t>(lit.Get<double>(2 * i), out);
      out += ", ";
      AppendWideFloat<double, uint64_t>(lit.Get<double>(2 * i + 1), out);
      out += ')';
      return;
    default:
      out += "?";
  }
}

std::string Literal::ValueToString() const {
  std::string out;
  if (shape_.IsTuple()) {
    out += '(';
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i > 0) out += ", ";
      out += tuple_[i].ValueToString();
    }
    out += ')';
    return out;
  }
  AppendArray(*this, out);
  return out;
}

std::string Literal::ToString() const {
  if (shape_.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i > 0) out += ", ";
      out += tuple_[i].ToString();
    }
    out += ')';
    return out;
  }
  return shape_.ToString() + " " + ValueToString();
}

bool Literal::operator==(const Literal& other) const {
  return shape_.Compatible(other.shape_) && elided_ == other.elided_ && data_ == other.data_ &&
         tuple_ == other.tuple_;
}

}  // namespace kiln::hlo
