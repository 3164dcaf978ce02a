// Edit distance (Levenshtein: insertions, deletions, substitutions) between
// two short words, for "did you mean ...?" suggestions in error messages.
//
// O(|a|·|b|) time and O(|b|) memory: callers keep the words short (names,
// not inputs of unbounded size). Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace kiln {

enum class LetterCase { kSensitive, kIgnored };

size_t EditDistance(std::string_view a, std::string_view b, LetterCase letter_case = LetterCase::kSensitive);

}  // namespace kiln
