// The memory a parsed Module's IR lives in: its instructions and their
// operand, user, attribute, callee and control lists. (Shapes are shared
// between the instructions that have equal ones; names of up to 15 bytes,
// most of them, sit inside the instruction.) Allocation is a pointer bump into chunks that
// grow geometrically; nothing is given back until the arena itself is
// destroyed, which returns the chunks in a handful of frees. A module of
// a hundred thousand instructions is therefore built with a few dozen
// mallocs instead of several hundred thousand, and freed the same way.
//
// Owned by the Module (see Module::arena()); outlives every instruction
// placed in it. Not thread-safe: a module is mutated by one thread at a
// time, and reads never allocate. Memory freed into it (a user list that
// grew, a deleted instruction) stays reserved until the module dies, so a
// pass pipeline grows it by at most a small factor of the parsed size.
#pragma once

#include <cstddef>
#include <memory_resource>

namespace kiln::hlo {

class IrArena final : public std::pmr::memory_resource {
 public:
  IrArena() : chunks_(kFirstChunkBytes, std::pmr::new_delete_resource()) {}
  IrArena(const IrArena&) = delete;
  IrArena& operator=(const IrArena&) = delete;

  // Bytes handed out so far (including memory since given back, which an
  // arena never reuses).
  size_t bytes_allocated() const { return bytes_allocated_; }

 private:
  static constexpr size_t kFirstChunkBytes = 64 << 10;

  void* do_allocate(size_t bytes, size_t alignment) override {
    bytes_allocated_ += bytes;
    return chunks_.allocate(bytes, alignment);
  }
  void do_deallocate(void*, size_t, size_t) override {}
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  std::pmr::monotonic_buffer_resource chunks_;
  size_t bytes_allocated_ = 0;
};

}  // namespace kiln::hlo
