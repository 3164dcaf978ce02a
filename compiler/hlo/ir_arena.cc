#include "compiler/hlo/ir_arena.h"

#include <sanitizer/asan_interface.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

namespace kiln::hlo {
namespace {

// Full-size chunks of arenas that died, kept for the arenas that come
// next: their pages are already mapped, so a module parsed after another
// takes no page faults (and no kernel zeroing) for its IR, however the
// allocator decays its free memory. Bounded: beyond kMaxPooledChunks a
// chunk goes back to the allocator. Thread-safe; taken once per chunk, so
// the lock is never hot. A pooled chunk is poisoned for AddressSanitizer,
// so a pointer into a dead module still faults in the sanitizer build.
class ChunkPool {
 public:
  static constexpr size_t kMaxPooledChunks = 32;

  void* Take() {
    std::lock_guard<std::mutex> lock(mu_);
    if (chunks_.empty()) return nullptr;
    void* chunk = chunks_.back();
    chunks_.pop_back();
    ASAN_UNPOISON_MEMORY_REGION(chunk, IrArena::kMaxChunkBytes);
    return chunk;
  }
  // False when the pool is full (the caller frees the chunk).
  bool Give(void* chunk) {
    std::lock_guard<std::mutex> lock(mu_);
    if (chunks_.size() >= kMaxPooledChunks) return false;
    ASAN_POISON_MEMORY_REGION(chunk, IrArena::kMaxChunkBytes);
    chunks_.push_back(chunk);
    return true;
  }

 private:
  std::mutex mu_;
  std::vector<void*> chunks_;
};

// Never destroyed: a module may die during static destruction.
ChunkPool& Pool() {
  static ChunkPool* pool = new ChunkPool;
  return *pool;
}

uintptr_t AlignUp(uintptr_t at, size_t alignment) {
  return (at + alignment - 1) & ~(uintptr_t{alignment} - 1);
}

}  // namespace

IrArena::~IrArena() {
  for (const Chunk& chunk : chunks_) {
    const size_t bytes = static_cast<size_t>(chunk.end - chunk.begin);
    if (bytes == kMaxChunkBytes && Pool().Give(chunk.begin)) continue;
    ::operator delete(chunk.begin);
  }
}

bool IrArena::Contains(const void* p) const { return ChunkAround(p).first != nullptr; }

std::pair<const char*, const char*> IrArena::ChunkAround(const void* p) const {
  const char* at = static_cast<const char*>(p);
  // The last chunk that begins at or before `at`.
  auto it = std::upper_bound(chunks_.begin(), chunks_.end(), at,
                             [](const char* a, const Chunk& c) { return a < c.begin; });
  if (it == chunks_.begin() || at >= std::prev(it)->end) return {nullptr, nullptr};
  return {std::prev(it)->begin, std::prev(it)->end};
}

void IrArena::AddChunk(char* begin, size_t bytes) {
  auto it = std::upper_bound(chunks_.begin(), chunks_.end(), begin,
                             [](const char* a, const Chunk& c) { return a < c.begin; });
  chunks_.insert(it, Chunk{begin, begin + bytes});
}

void* IrArena::do_allocate(size_t bytes, size_t alignment) {
  bytes_allocated_ += bytes;
  const uintptr_t aligned = AlignUp(reinterpret_cast<uintptr_t>(next_), alignment);
  if (next_ != nullptr && aligned + bytes <= reinterpret_cast<uintptr_t>(end_)) {
    next_ = reinterpret_cast<char*>(aligned + bytes);
    return reinterpret_cast<void*>(aligned);
  }
  return NewChunk(bytes, alignment);
}

void* IrArena::NewChunk(size_t bytes, size_t alignment) {
  const size_t need = bytes + alignment;
  if (need > std::min(kMaxChunkBytes / 4, next_chunk_bytes_)) {
    // A large list or text gets a chunk of its own (of its size); the bump
    // chunk stays as it is.
    void* own = ::operator new(need);
    AddChunk(static_cast<char*>(own), need);
    return reinterpret_cast<void*>(AlignUp(reinterpret_cast<uintptr_t>(own), alignment));
  }
  const size_t size = next_chunk_bytes_;
  if (next_chunk_bytes_ < kMaxChunkBytes) next_chunk_bytes_ *= 2;
  void* memory = size == kMaxChunkBytes ? Pool().Take() : nullptr;
  if (memory == nullptr) memory = ::operator new(size);
  char* chunk = static_cast<char*>(memory);
  AddChunk(chunk, size);
  end_ = chunk + size;
  const uintptr_t aligned = AlignUp(reinterpret_cast<uintptr_t>(chunk), alignment);
  next_ = reinterpret_cast<char*>(aligned + bytes);
  return reinterpret_cast<void*>(aligned);
}

}  // namespace kiln::hlo
