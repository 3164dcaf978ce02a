#include "base/edit_distance.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace kiln {
namespace {

char Fold(char c, LetterCase letter_case) {
  if (letter_case == LetterCase::kSensitive) return c;
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b, LetterCase letter_case) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];  // the distance of a[0, i-1) and b[0, j-1)
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = diagonal + (Fold(a[i - 1], letter_case) == Fold(b[j - 1], letter_case) ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::optional<std::string_view> ClosestWord(std::string_view word, std::span<const std::string> candidates) {
  std::optional<std::string_view> best;
  size_t best_distance = 3;
  for (const std::string& candidate : candidates) {
    const size_t distance = EditDistance(word, candidate, LetterCase::kIgnored);
    if (distance < best_distance && 2 * distance < std::max(word.size(), candidate.size())) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace kiln
