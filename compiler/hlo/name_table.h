// A flat open-addressing map from names (views into stable storage) to
// pointers, for the parser's per-computation symbol tables. One allocation
// per growth instead of one per entry. Not thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace kiln::hlo {

template <typename T>
class NameTable {
 public:
  NameTable() { slots_.resize(64); }

  // nullptr when absent.
  T* Find(std::string_view name) const {
    uint64_t h = Hash(name);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.value == nullptr) return nullptr;
      if (s.hash == h && s.name == name) return s.value;
    }
  }

  // False if the name is already present (the table is unchanged).
  bool Insert(std::string_view name, T* value) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    uint64_t h = Hash(name);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.value == nullptr) {
        s = {h, name, value};
        ++size_;
        return true;
      }
      if (s.hash == h && s.name == name) return false;
    }
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    std::string_view name;
    T* value = nullptr;
  };

  static uint64_t Hash(std::string_view name) { return XXH3_64bits(name.data(), name.size()); }

  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.value == nullptr) continue;
      size_t i = s.hash & mask;
      while (slots_[i].value != nullptr) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace kiln::hlo
