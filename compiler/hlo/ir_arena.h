// The memory a parsed Module's IR lives in: its instructions with their
// names, attributes and operand, user, callee and control lists, and what
// those instructions hold outside it (their shapes and constants' values),
// kept until the arena dies. Allocation is a pointer bump into chunks that
// grow geometrically up to kMaxChunkBytes; nothing is given back until the
// arena itself is destroyed. A module of a hundred thousand instructions
// is therefore built with a few dozen mallocs instead of several hundred
// thousand, and freed without visiting its instructions: the module
// releases the instructions in its arena unread (ChunkAround), and the arena
// drops the kept shapes and literals and its chunks. Full-size chunks of a
// dead arena are kept (a bounded, process-wide pool) for the next one, so
// a server parsing module after module does not fault fresh zeroed pages
// in for each.
//
// Owned by the Module (see Module::arena()); outlives every instruction
// placed in it. Not thread-safe: a module is mutated by one thread at a
// time, and reads never allocate. Memory freed into it (a user list that
// grew, a deleted instruction) stays reserved until the module dies, so a
// pass pipeline grows it by at most a small factor of the parsed size.
#pragma once

#include <cstddef>
#include <memory>
#include <memory_resource>
#include <utility>
#include <vector>

#include "compiler/hlo/literal.h"
#include "compiler/hlo/shape.h"

namespace kiln::hlo {

class IrArena final : public std::pmr::memory_resource {
 public:
  static constexpr size_t kFirstChunkBytes = 64 << 10;
  static constexpr size_t kMaxChunkBytes = 1 << 20;  // also the pooled size

  IrArena() = default;
  IrArena(const IrArena&) = delete;
  IrArena& operator=(const IrArena&) = delete;
  ~IrArena() override;

  // Bytes handed out so far (including memory since given back, which an
  // arena never reuses).
  size_t bytes_allocated() const { return bytes_allocated_; }

  // Whether `p` points into memory this arena handed out. O(log chunks);
  // reads only the arena.
  bool Contains(const void* p) const;
  // The chunk `p` points into, as [begin, end); empty (two nulls) when it
  // points into none. Lets a caller walking many pointers, which mostly
  // fall in the chunk of the one before, test them without a search.
  std::pair<const char*, const char*> ChunkAround(const void* p) const;

  // Keeps `shape` until the arena dies; the reference stays valid until
  // the next KeepShape.
  const Shape& KeepShape(Shape shape) { return kept_shapes_.emplace_back(std::move(shape)); }
  // Keeps `literal` until the arena dies.
  const Literal* KeepLiteral(std::unique_ptr<Literal> literal) {
    return kept_literals_.emplace_back(std::move(literal)).get();
  }

 private:
  struct Chunk {
    char* begin;
    char* end;
  };

  void* do_allocate(size_t bytes, size_t alignment) override;
  void do_deallocate(void*, size_t, size_t) override {}
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
  // Starts a chunk holding `bytes` at `alignment` and returns them.
  void* NewChunk(size_t bytes, size_t alignment);
  void AddChunk(char* begin, size_t bytes);

  std::vector<Chunk> chunks_;  // sorted by address
  char* next_ = nullptr;       // bump pointer into the newest chunk
  char* end_ = nullptr;
  size_t next_chunk_bytes_ = kFirstChunkBytes;
  size_t bytes_allocated_ = 0;
  std::vector<Shape> kept_shapes_;
  std::vector<std::unique_ptr<Literal>> kept_literals_;
};

}  // namespace kiln::hlo
