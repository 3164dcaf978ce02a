// A memo of parsed shapes keyed by their exact source text, for the module
// parser: a large module writes the same few hundred shapes tens of
// thousands of times, and copying a parsed Shape is much cheaper than
// lexing and building it again.
//
// Soundness rests on one rule the parser keeps: a span is inserted only
// after ParseShapeTokens consumed exactly that span, and ScanShapeExtent
// only returns spans whose parse cannot depend on the bytes after them. A
// hit therefore yields what parsing the same bytes would.
//
// The cache keeps views into the caller's source text, which must outlive
// it. Not thread-safe; one per parse.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string_view>

#include "compiler/hlo/name_table.h"
#include "compiler/hlo/shape.h"

namespace kiln::hlo {

// The end offset of the shape text starting at `offset` in `source`, when a
// byte scan can delimit it: an array shape `type[dims]` with an optional
// layout written right after it, or a parenthesised tuple of shapes on one
// line. nullopt for anything else (buffer shapes, comments, a layout
// separated by whitespace, unbalanced text); the caller then parses the
// usual way and does not cache.
std::optional<size_t> ScanShapeExtent(std::string_view source, size_t offset);

class ShapeTextCache {
 public:
  // The shape parsed from exactly `text`, or nullptr.
  const Shape* Find(std::string_view text) const { return shapes_.Find(text); }
  // Records the shape parsed from `text` (a view into the source). A text
  // already present is left as it is.
  void Insert(std::string_view text, Shape shape);

 private:
  std::deque<Shape> storage_;  // stable addresses for the table's pointers
  NameTable<Shape> shapes_;
};

}  // namespace kiln::hlo
