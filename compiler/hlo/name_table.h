// A flat open-addressing map from names (views into stable storage) to
// pointers, for the parser's symbol tables and name lookups. Not
// thread-safe for mutation; concurrent Find calls are fine.
//
// Written for the parser's hot path: a large computation has tens of
// thousands of instructions, each inserted once and looked up by every
// user. The probe array holds 8-byte slots (32 bits of hash, 32 bits of
// entry index) so that it stays cache-resident, and the entries themselves
// sit in insertion order, where lookups of recent definitions (the common
// case) find them close together.
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
    const uint64_t h = XXH3_64bits(name.data(), name.size());
    const uint32_t tag = Tag(h);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot s = slots_[i];
      if (s.index == 0) return nullptr;
      if (s.tag == tag) {
        const Entry& e = entries_[s.index - 1];
        if (e.name == name) return e.value;
      }
    }
  }

  // False if the name is already present (the table is unchanged). Holds
  // at most 2^32 - 2 names.
  bool Insert(std::string_view name, T* value) {
    if ((entries_.size() + 1) * 2 > slots_.size()) Grow();
    const uint64_t h = XXH3_64bits(name.data(), name.size());
    const uint32_t tag = Tag(h);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.index == 0) {
        entries_.push_back({name, value, h});
        s = {tag, static_cast<uint32_t>(entries_.size())};
        return true;
      }
      if (s.tag == tag && entries_[s.index - 1].name == name) return false;
    }
  }

  size_t size() const { return entries_.size(); }

 private:
  struct Slot {
    uint32_t tag = 0;
    uint32_t index = 0;  // 1 + position in entries_; 0 marks an empty slot
  };
  struct Entry {
    std::string_view name;
    T* value;
    uint64_t hash;  // kept so that growing does not rehash names
  };

  static uint32_t Tag(uint64_t h) { return static_cast<uint32_t>(h >> 32); }

  void Grow() {
    slots_.assign(slots_.size() * 2, Slot{});
    const size_t mask = slots_.size() - 1;
    for (size_t k = 0; k < entries_.size(); ++k) {
      size_t i = entries_[k].hash & mask;
      while (slots_[i].index != 0) i = (i + 1) & mask;
      slots_[i] = {Tag(entries_[k].hash), static_cast<uint32_t>(k + 1)};
    }
  }

  std::vector<Slot> slots_;
  std::vector<Entry> entries_;
};

}  // namespace kiln::hlo
