// Edit distance (Levenshtein: insertions, deletions, substitutions) between
// two short words, for "did you mean ...?" suggestions in error messages.
//
// O(|a|·|b|) time and O(|b|) memory: callers keep the words short (names,
// not inputs of unbounded size). Pure; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kiln {

enum class LetterCase { kSensitive, kIgnored };

size_t EditDistance(std::string_view a, std::string_view b, LetterCase letter_case = LetterCase::kSensitive);

// The candidate `word` is most likely a misspelling of, if any is close: at
// most two edits (letter case ignored), and fewer than half of the longer
// word's length; the first of equally close ones. Points into `candidates`.
std::optional<std::string_view> ClosestWord(std::string_view word, std::span<const std::string> candidates);

}  // namespace kiln
