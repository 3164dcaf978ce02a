// A memo of values parsed from source text, keyed by the exact bytes they
// were parsed from; the module parser keeps one for shapes. A large module
// writes the same few hundred shapes tens of thousands of times, and
// copying a parsed shape is much cheaper than lexing and building it again.
//
// Soundness rests on the parser's rule (see text_extent.h): a span is
// inserted only after the token parser read exactly that span, and the
// spans it looks up are delimited so that their reading cannot depend on
// the bytes after them. A hit therefore yields what parsing would.
//
// Keys are views into the caller's source text, which must outlive the
// memo. Not thread-safe; one per parse.
#pragma once

#include <deque>
#include <string_view>
#include <utility>

#include "compiler/hlo/name_table.h"

namespace kiln::hlo {

template <typename T>
class TextMemo {
 public:
  // The value parsed from exactly `text`, or nullptr.
  const T* Find(std::string_view text) const { return table_.Find(text); }
  // Records the value parsed from `text`. A text already present keeps its
  // first value.
  void Insert(std::string_view text, T value) {
    if (table_.Find(text) != nullptr) return;
    storage_.push_back(std::move(value));
    table_.Insert(text, &storage_.back());
  }

 private:
  std::deque<T> storage_;  // stable addresses for the table's pointers
  NameTable<T> table_;
};

}  // namespace kiln::hlo
