// ParseSharding: the text of a `sharding=` attribute to an HloSharding.

#include <cctype>

#include "base/str_cat.h"
#include "compiler/hlo/sharding.h"

namespace kiln::hlo {
namespace {

constexpr int kMaxTupleDepth = 64;

// A cursor over sharding text that skips white space between tokens.
class ShardingReader {
 public:
  explicit ShardingReader(std::string_view text) : text_(text) {}

  Result<HloSharding> Sharding(int depth);
  bool AtEnd() {
    SkipSpace();
    return pos_ == text_.size();
  }
  Error Expected(std::string_view what) {
    SkipSpace();
    std::string got = pos_ < text_.size() ? StrCat("'", text_.substr(pos_, 12), "'") : "the end";
    return InvalidArgumentError(StrCat("expected ", what, " at offset ", pos_, ", got ", got));
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool AcceptText(std::string_view word) {
    SkipSpace();
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  std::string_view Word() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }
  Result<int64_t> Int() {
    SkipSpace();
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      value = value * 10 + (text_[pos_] - '0');
      if (value > (int64_t{1} << 40)) return InvalidArgumentError(StrCat("number too large at offset ", start));
      ++pos_;
    }
    if (pos_ == start) return Expected("a number");
    return value;
  }
  // "[a,b,c]"
  Result<std::vector<int64_t>> IntList() {
    if (!Accept('[')) return Expected("'['");
    std::vector<int64_t> out;
    if (Accept(']')) return out;
    do {
      KILN_ASSIGN_OR_RETURN(int64_t v, Int());
      out.push_back(v);
      if (out.size() > static_cast<size_t>(kMaxShardingDevices)) return Expected("a shorter list");
    } while (Accept(','));
    if (!Accept(']')) return Expected("',' or ']'");
    return out;
  }
  // Skips a balanced {...} (metadata).
  Status SkipBraced() {
    if (!Accept('{')) return Expected("'{'");
    int depth = 1;
    bool in_string = false;
    while (pos_ < text_.size() && depth > 0) {
      char c = text_[pos_++];
      if (in_string) {
        if (c == '\\') ++pos_;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        --depth;
      }
    }
    if (depth > 0) return Expected("'}' closing metadata");
    return Ok();
  }
  Result<std::vector<int64_t>> Devices(const std::vector<int64_t>& tile_dims);
  Result<HloSharding> Tiled();

  std::string_view text_;
  size_t pos_ = 0;
};

// The device list after "devices=[...]": explicit ids or <=[dims]T(perm).
Result<std::vector<int64_t>> ShardingReader::Devices(const std::vector<int64_t>& tile_dims) {
  int64_t count = 1;
  for (int64_t d : tile_dims) {
    if (d <= 0) return InvalidArgumentError(StrCat("tile dim ", d, " is not positive"));
    count *= d;
    if (count > kMaxShardingDevices) {
      return InvalidArgumentError(StrCat("a tile assignment of more than ", kMaxShardingDevices, " devices"));
    }
  }
  if (!AcceptText("<=")) {
    std::vector<int64_t> devices;
    do {
      KILN_ASSIGN_OR_RETURN(int64_t v, Int());
      devices.push_back(v);
      if (static_cast<int64_t>(devices.size()) > count) {
        return InvalidArgumentError(StrCat("more devices listed than the ", count, " tiles of the assignment"));
      }
    } while (Accept(','));
    return devices;
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> reshape, IntList());
  int64_t iota_count = 1;
  for (int64_t d : reshape) {
    if (d <= 0 || iota_count * d > kMaxShardingDevices) return InvalidArgumentError("bad iota dims");
    iota_count *= d;
  }
  if (iota_count != count) {
    return InvalidArgumentError(StrCat("iota of ", iota_count, " devices for a tile assignment of ", count));
  }
  std::vector<int64_t> perm(reshape.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  if (AcceptText("T")) {
    if (!Accept('(')) return Expected("'(' after T");
    perm.clear();
    if (!Accept(')')) {
      do {
        KILN_ASSIGN_OR_RETURN(int64_t v, Int());
        perm.push_back(v);
        if (perm.size() > reshape.size()) break;
      } while (Accept(','));
      if (!Accept(')')) return Expected("',' or ')'");
    }
    std::vector<bool> seen(reshape.size(), false);
    if (perm.size() != reshape.size()) return InvalidArgumentError("transpose rank differs from the iota dims");
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(reshape.size()) || seen[p]) {
        return InvalidArgumentError("transpose is not a permutation of the iota dims");
      }
      seen[p] = true;
    }
  }
  // Device at position j of the transposed array: the iota value at the
  // untransposed index.
  std::vector<int64_t> strides(reshape.size(), 1);
  for (size_t i = reshape.size(); i-- > 1;) strides[i - 1] = strides[i] * reshape[i];
  std::vector<int64_t> devices(count);
  std::vector<int64_t> index(reshape.size(), 0);  // over transposed dims
  for (int64_t j = 0; j < count; ++j) {
    int64_t value = 0;
    for (size_t k = 0; k < perm.size(); ++k) value += index[k] * strides[perm[k]];
    devices[j] = value;
    for (size_t k = perm.size(); k-- > 0;) {
      if (++index[k] < reshape[perm[k]]) break;
      index[k] = 0;
    }
  }
  return devices;
}

Result<HloSharding> ShardingReader::Tiled() {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> tile_dims, IntList());
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> devices, Devices(tile_dims));
  std::vector<SubgroupType> subgroups;
  for (;;) {
    if (AcceptText("last_tile_dim_replicate")) {
      subgroups = {SubgroupType::kReplicated};
    } else if (AcceptText("last_tile_dims")) {
      if (!Accept('=') || !Accept('{')) return Expected("'={' after last_tile_dims");
      subgroups.clear();
      do {
        std::string_view type = Word();
        if (type == "replicated") {
          subgroups.push_back(SubgroupType::kReplicated);
        } else if (type == "manual") {
          subgroups.push_back(SubgroupType::kManual);
        } else {
          return InvalidArgumentError(StrCat("unsupported subgroup type '", type, "' in last_tile_dims"));
        }
      } while (Accept(','));
      if (!Accept('}')) return Expected("'}' closing last_tile_dims");
    } else {
      break;
    }
  }
  return HloSharding::Tiled(std::move(tile_dims), std::move(devices), std::move(subgroups));
}

Result<HloSharding> ShardingReader::Sharding(int depth) {
  if (depth > kMaxTupleDepth) return InvalidArgumentError("sharding nested too deeply");
  if (!Accept('{')) return Expected("'{'");
  if (Accept('}')) return HloSharding::Tuple({});
  if (Peek('{')) {
    std::vector<HloSharding> elements;
    do {
      KILN_ASSIGN_OR_RETURN(HloSharding e, Sharding(depth + 1));
      elements.push_back(std::move(e));
    } while (Accept(','));
    if (!Accept('}')) return Expected("',' or '}' in a tuple sharding");
    return HloSharding::Tuple(std::move(elements));
  }
  std::optional<HloSharding> result;
  std::string_view word = Word();
  if (word == "replicated") {
    result = HloSharding::Replicate();
  } else if (word == "manual") {
    result = HloSharding::Manual();
  } else if (word == "unknown") {
    result = HloSharding::Unknown();
  } else if (word == "maximal") {
    if (!AcceptText("device") || !Accept('=')) return Expected("'device=' after maximal");
    KILN_ASSIGN_OR_RETURN(int64_t device, Int());
    result = HloSharding::Maximal(device);
  } else if (word == "devices") {
    if (!Accept('=')) return Expected("'=' after devices");
    KILN_ASSIGN_OR_RETURN(HloSharding tiled, Tiled());
    result = std::move(tiled);
  } else if (word.empty()) {
    return Expected("a sharding (replicated, maximal, manual, devices=...)");
  } else {
    return InvalidArgumentError(StrCat("unsupported sharding '", word, "'"));
  }
  // Annotations that do not change the layout.
  for (;;) {
    if (AcceptText("metadata")) {
      if (!Accept('=')) return Expected("'=' after metadata");
      KILN_RETURN_IF_ERROR(SkipBraced());
    } else if (AcceptText("shard_as") || AcceptText("shard_like")) {
      KILN_RETURN_IF_ERROR(Int());
    } else {
      break;
    }
  }
  if (!Accept('}')) return Expected("'}'");
  return std::move(*result);
}

}  // namespace

Result<HloSharding> ParseSharding(std::string_view text) {
  ShardingReader reader(text);
  KILN_ASSIGN_OR_RETURN(HloSharding sharding, reader.Sharding(0));
  if (!reader.AtEnd()) return reader.Expected("the end of the sharding");
  return sharding;
}

}  // namespace kiln::hlo
