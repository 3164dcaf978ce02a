#include "compiler/hlo/text_extent.h"

namespace kiln::hlo {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Past the bracket group opening at `i` (one of "([{"), nesting any of the
// three; nullopt on a quote, a comment, a newline or the end of the text,
// none of which a shape contains.
std::optional<size_t> SkipGroup(std::string_view s, size_t i) {
  int depth = 0;
  for (; i < s.size(); ++i) {
    switch (s[i]) {
      case '(': case '[': case '{':
        ++depth;
        break;
      case ')': case ']': case '}':
        if (--depth == 0) return i + 1;
        break;
      case '"': case '/': case '\n':
        return std::nullopt;
      default:
        break;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<size_t> ScanShapeExtent(std::string_view s, size_t offset) {
  if (offset >= s.size()) return std::nullopt;
  // A tuple ends at its closing parenthesis: the parser looks no further.
  if (s[offset] == '(') return SkipGroup(s, offset);
  size_t i = offset;
  while (i < s.size() && IsWordChar(s[i])) ++i;
  if (i == offset || i >= s.size() || s[i] != '[') return std::nullopt;
  std::optional<size_t> end = SkipGroup(s, i);
  if (!end) return std::nullopt;
  i = *end;
  if (i < s.size() && s[i] == '{') {
    // A layout written right after the dimensions.
    size_t j = i + 1;
    while (j < s.size() && IsSpace(s[j])) ++j;
    if (j >= s.size() || !((s[j] >= '0' && s[j] <= '9') || s[j] == ':')) return std::nullopt;
    return SkipGroup(s, i);
  }
  // Without a layout, the parser peeks at what follows: a '{' whose next
  // token is an integer or ':' is read as a layout, and a comment hides
  // what follows; such text is not delimited here. A '{' before a name or
  // '}' (a computation's body after its signature) is never a layout.
  size_t j = i;
  while (j < s.size() && IsSpace(s[j])) ++j;
  if (j < s.size() && s[j] == '/') return std::nullopt;
  if (j < s.size() && s[j] == '{') {
    size_t k = j + 1;
    while (k < s.size() && IsSpace(s[k])) ++k;
    const bool opens_body = k < s.size() && (s[k] == '%' || s[k] == '}' ||
                                             (IsWordChar(s[k]) && !(s[k] >= '0' && s[k] <= '9')));
    if (!opens_body) return std::nullopt;
  }
  return i;
}

}  // namespace kiln::hlo
