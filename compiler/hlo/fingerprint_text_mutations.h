// Text mutations of HLO shapes, attribute values, opcodes and constants for
// the corpus mutation test (fingerprint_corpus_mutation_test.cc). The
// Mutate*/Other* functions return the changed text, or nullopt when the input
// offers nothing to change; the predicates say which attributes and opcodes a
// mutation must see. Test-only code; pure functions apart from the caller's rng.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::hlo::fingerprint_testing {

// An array leaf of a shape's text: "f32[2,<=3]{0,1}".
struct ArrayLeaf {
  size_t type_begin = 0;
  size_t lsq = 0, rsq = 0;  // '[' and ']'
  size_t layout_begin = std::string::npos, layout_end = std::string::npos;  // '{' .. '}'
  int rank = 0;
};

inline bool IsTypeChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

inline std::vector<ArrayLeaf> ArrayLeaves(const std::string& s) {
  std::vector<ArrayLeaf> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '[') continue;
    ArrayLeaf leaf;
    leaf.lsq = i;
    leaf.type_begin = i;
    while (leaf.type_begin > 0 && IsTypeChar(s[leaf.type_begin - 1])) --leaf.type_begin;
    leaf.rsq = s.find(']', i);
    if (leaf.rsq == std::string::npos || leaf.type_begin == i) continue;
    leaf.rank = leaf.rsq == i + 1 ? 0 : 1 + static_cast<int>(std::count(s.begin() + i, s.begin() + leaf.rsq, ','));
    if (leaf.rsq + 1 < s.size() && s[leaf.rsq + 1] == '{') {
      leaf.layout_begin = leaf.rsq + 1;
      leaf.layout_end = s.find('}', leaf.layout_begin);
    }
    out.push_back(leaf);
    i = leaf.rsq;
  }
  return out;
}

template <typename T>
inline const T& Pick(const std::vector<T>& v, std::mt19937_64& rng) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

// One dimension (or bound) of one array leaf, plus one.
inline std::optional<std::string> MutateDimension(const std::string& shape, std::mt19937_64& rng) {
  std::vector<std::pair<size_t, size_t>> numbers;  // [begin, end) of digit runs in [...]
  for (const ArrayLeaf& leaf : ArrayLeaves(shape)) {
    for (size_t i = leaf.lsq + 1; i < leaf.rsq; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(shape[i]))) continue;
      size_t j = i;
      while (j < leaf.rsq && std::isdigit(static_cast<unsigned char>(shape[j]))) ++j;
      numbers.emplace_back(i, j);
      i = j;
    }
  }
  if (numbers.empty()) return std::nullopt;
  auto [b, e] = Pick(numbers, rng);
  std::string out = shape;
  out.replace(b, e - b, std::to_string(std::stoll(shape.substr(b, e - b)) + 1));
  return out;
}

inline std::optional<std::string> OtherElementType(std::string_view t) {
  static const std::map<std::string_view, std::string_view> kOther = {
      {"pred", "s8"},   {"s8", "s16"},   {"s16", "s32"},       {"s32", "s64"},
      {"s64", "s32"},   {"u8", "u16"},   {"u16", "u32"},       {"u32", "u64"},
      {"u64", "u32"},   {"f16", "f32"},  {"bf16", "f32"},      {"f32", "f16"},
      {"f64", "f32"},   {"c64", "c128"}, {"c128", "c64"},      {"s4", "s8"},
      {"u4", "u8"},     {"f8e4m3fn", "f8e5m2"}, {"f8e5m2", "f8e4m3fn"},
  };
  auto it = kOther.find(t);
  if (it == kOther.end()) return std::nullopt;
  return std::string(it->second);
}

inline std::optional<std::string> MutateElementType(const std::string& shape,
                                                    std::mt19937_64& rng) {
  std::vector<ArrayLeaf> leaves;
  for (const ArrayLeaf& leaf : ArrayLeaves(shape)) {
    if (OtherElementType(std::string_view(shape).substr(leaf.type_begin, leaf.lsq - leaf.type_begin))) {
      leaves.push_back(leaf);
    }
  }
  if (leaves.empty()) return std::nullopt;
  const ArrayLeaf& leaf = Pick(leaves, rng);
  std::string out = shape;
  out.replace(leaf.type_begin, leaf.lsq - leaf.type_begin,
              *OtherElementType(std::string_view(shape).substr(leaf.type_begin, leaf.lsq - leaf.type_begin)));
  return out;
}

// A rank >= 2 leaf gets a non-default minor_to_major: {0,1,...} where none
// was printed (the default), else its first two entries swapped.
inline std::optional<std::string> MutateLayout(const std::string& shape, std::mt19937_64& rng) {
  std::vector<ArrayLeaf> leaves;
  for (const ArrayLeaf& leaf : ArrayLeaves(shape)) {
    if (leaf.rank >= 2 && (leaf.layout_begin == std::string::npos || leaf.layout_end != std::string::npos)) {
      leaves.push_back(leaf);
    }
  }
  if (leaves.empty()) return std::nullopt;
  const ArrayLeaf& leaf = Pick(leaves, rng);
  std::string out = shape;
  if (leaf.layout_begin == std::string::npos) {
    std::string layout = "{";
    for (int i = 0; i < leaf.rank; ++i) layout += (i > 0 ? "," : "") + std::to_string(i);
    out.insert(leaf.rsq + 1, layout + "}");
    return out;
  }
  std::string inner = shape.substr(leaf.layout_begin + 1, leaf.layout_end - leaf.layout_begin - 1);
  size_t colon = inner.find(':');
  std::string dims = inner.substr(0, colon);
  size_t comma = dims.find(',');
  if (comma == std::string::npos) return std::nullopt;
  size_t comma2 = dims.find(',', comma + 1);
  std::string first = dims.substr(0, comma);
  std::string second = dims.substr(comma + 1, comma2 == std::string::npos ? std::string::npos : comma2 - comma - 1);
  std::string swapped = second + "," + first + (comma2 == std::string::npos ? "" : dims.substr(comma2));
  out.replace(leaf.layout_begin + 1, dims.size(), swapped);
  return out;
}

// Attributes whose digits are semantic (and kept as text).
inline bool IsNumericSemanticAttribute(std::string_view name) {
  static const std::set<std::string_view> kNames = {
      "dimensions", "index", "slice", "dynamic_slice_sizes", "iota_dimension", "padding",
      "window", "lhs_contracting_dims", "rhs_contracting_dims", "lhs_batch_dims",
      "rhs_batch_dims", "dim_labels", "feature_group_count", "batch_group_count",
      "feature_index", "offset_dims", "collapsed_slice_dims", "start_index_map",
      "index_vector_dim", "slice_sizes", "update_window_dims", "inserted_window_dims",
      "scatter_dims_to_operand_dims", "replica_groups", "exponent_bits", "mantissa_bits",
      "fft_length", "epsilon", "source_target_pairs", "split_dimension",
      "concat_dimension", "split_count", "sharding", "output_to_operand_aliasing",
      "operand_batching_dims", "start_indices_batching_dims", "input_batching_dims",
      "scatter_indices_batching_dims", "k", "largest", "tuple_index", "distribution"};
  return kNames.contains(name);
}

// Plus one on a random digit run (outside strings unless inside_strings).
inline std::optional<std::string> MutateNumberInValue(const std::string& value,
                                                      std::mt19937_64& rng,
                                                      bool inside_strings = false) {
  std::vector<std::pair<size_t, size_t>> numbers;
  bool in_string = false;
  for (size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (in_string && !inside_strings) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) continue;
    size_t j = i;
    while (j < value.size() && std::isdigit(static_cast<unsigned char>(value[j]))) ++j;
    if (j - i <= 15) numbers.emplace_back(i, j);
    i = j;
  }
  if (numbers.empty()) return std::nullopt;
  auto [b, e] = Pick(numbers, rng);
  std::string out = value;
  out.replace(b, e - b, std::to_string(std::stoll(value.substr(b, e - b)) + 1));
  return out;
}

inline std::optional<std::string> OtherDirection(std::string_view d) {
  static const std::map<std::string_view, std::string_view> kOther = {
      {"LT", "GT"}, {"GT", "LT"}, {"LE", "GE"}, {"GE", "LE"}, {"EQ", "NE"}, {"NE", "EQ"}};
  auto it = kOther.find(d);
  if (it == kOther.end()) return std::nullopt;
  return std::string(it->second);
}

inline std::optional<std::string> OtherOpcode(std::string_view op) {
  static const std::map<std::string_view, std::string_view> kOther = {
      {"add", "multiply"},       {"multiply", "add"},     {"subtract", "add"},
      {"divide", "multiply"},    {"maximum", "minimum"},  {"minimum", "maximum"},
      {"and", "or"},             {"or", "and"},           {"xor", "or"},
      {"exponential", "log"},    {"log", "exponential"},  {"negate", "abs"},
      {"abs", "negate"},         {"sine", "cosine"},      {"cosine", "sine"},
      {"tanh", "logistic"},      {"logistic", "tanh"},    {"sqrt", "rsqrt"},
      {"rsqrt", "sqrt"},         {"floor", "ceil"},       {"ceil", "floor"},
      {"power", "atan2"},        {"copy", "negate"},      {"not", "negate"},
  };
  auto it = kOther.find(op);
  if (it == kOther.end()) return std::nullopt;
  return std::string(it->second);
}

// A different value for the first element of a constant's literal text:
// true<->false, or the last digit of the first number's integer part moved
// by one ("127" -> "126", "0.5" -> "1.5").
inline std::optional<std::string> MutateConstant(const std::string& lit) {
  for (size_t i = 0; i < lit.size(); ++i) {
    char c = lit[i];
    char prev = i > 0 ? lit[i - 1] : ' ';
    bool word_start = !std::isalnum(static_cast<unsigned char>(prev)) && prev != '.' && prev != '_';
    if (!word_start) continue;
    if (lit.compare(i, 4, "true") == 0) return lit.substr(0, i) + "false" + lit.substr(i + 4);
    if (lit.compare(i, 5, "false") == 0) return lit.substr(0, i) + "true" + lit.substr(i + 5);
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < lit.size() && std::isdigit(static_cast<unsigned char>(lit[j]))) ++j;
      std::string out = lit;
      char& d = out[j - 1];
      d = d == '0' ? '1' : static_cast<char>(d - 1);
      return out;
    }
  }
  return std::nullopt;
}

inline bool IsNonCommutative(std::string_view op) {
  static const std::set<std::string_view> kOps = {
      "subtract", "divide", "power", "remainder", "atan2", "compare", "shift-left",
      "shift-right-arithmetic", "shift-right-logical", "concatenate", "complex"};
  return kOps.contains(op);
}

}  // namespace kiln::hlo::fingerprint_testing
