#include "runtime/io/literal_file.h"

#include <charconv>
#include <cmath>

#include "compiler/hlo/parser.h"
#include "runtime/io/file_bytes.h"
#include "base/str_cat.h"

namespace kiln::runtime::io {
namespace {

std::string_view Trim(std::string_view s) {
  const char* kSpace = " \t\r";
  size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  size_t end = s.find_last_not_of(kSpace);
  return s.substr(begin, end - begin + 1);
}

// A non-negative finite double written in full (no trailing characters).
std::optional<double> ParseTolerance(std::string_view text) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  if (!std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

// "abs=0.0001 rel=1e-05": both keys, each once, in any order.
Result<Tolerance> ParseErrorSpec(std::string_view value) {
  Tolerance tolerance;
  bool seen_abs = false, seen_rel = false;
  while (!(value = Trim(value)).empty()) {
    size_t end = value.find_first_of(" \t");
    std::string_view item = value.substr(0, end);
    value = end == std::string_view::npos ? std::string_view() : value.substr(end);
    size_t eq = item.find('=');
    std::string_view key = item.substr(0, eq);
    std::optional<double> number;
    if (eq != std::string_view::npos) number = ParseTolerance(item.substr(eq + 1));
    bool* seen = key == "abs" ? &seen_abs : key == "rel" ? &seen_rel : nullptr;
    if (seen == nullptr || !number) {
      return InvalidArgumentError(StrCat("expected abs=<number> and rel=<number>, got \"", item, "\""));
    }
    if (*seen) return InvalidArgumentError(StrCat("\"", key, "\" given twice"));
    *seen = true;
    (key == "abs" ? tolerance.abs : tolerance.rel) = *number;
  }
  if (!seen_abs || !seen_rel) return InvalidArgumentError("expected both abs=<number> and rel=<number>");
  return tolerance;
}

// N of "param.N", or nullopt when `name` is not of that form.
std::optional<int64_t> ParamNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "param.";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  std::string_view digits = name.substr(kPrefix.size());
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || n < 0) {
    return std::nullopt;
  }
  return n;
}

// Applies one `name = value` line to `file`; errors say what, not where.
Status ApplyLine(std::string_view name, std::string_view value, LiteralFile& file) {
  if (name == "compare") {
    if (value == "equal") {
      file.compare = CompareMode::kEqual;
    } else if (value == "near") {
      file.compare = CompareMode::kNear;
    } else {
      return InvalidArgumentError(StrCat("compare must be \"equal\" or \"near\", got \"", value, "\""));
    }
    return Ok();
  }
  if (name == "error_spec") {
    auto spec = ParseErrorSpec(value);
    if (!spec) return spec.error().WithContext("bad error_spec");
    file.error_spec = *spec;
    return Ok();
  }
  std::optional<int64_t> param = ParamNumber(name);
  if (name != "result" && !param) {
    return InvalidArgumentError(
        StrCat("unknown name \"", name, "\" (expected param.N, result, compare or error_spec)"));
  }
  auto literal = hlo::ParseLiteral(value);
  if (!literal) return InvalidArgumentError(StrCat("bad literal for ", name, ": ", literal.error().ToString()));
  if (param) {
    if (!file.params.emplace(*param, std::move(*literal)).second) {
      return InvalidArgumentError(StrCat(name, " given twice"));
    }
  } else {
    if (file.result) return InvalidArgumentError("result given twice");
    file.result = std::move(*literal);
  }
  return Ok();
}

}  // namespace

Result<std::vector<hlo::Literal>> LiteralFile::Arguments() const {
  std::vector<hlo::Literal> args;
  args.reserve(params.size());
  for (const auto& [number, literal] : params) {
    if (number != static_cast<int64_t>(args.size())) {
      return InvalidArgumentError(
          StrCat("param.", args.size(), " is missing (params must be numbered 0..", params.size() - 1, ")"));
    }
    args.push_back(literal);
  }
  return args;
}

Result<LiteralFile> ParseLiteralFile(std::string_view text, std::string_view filename) {
  LiteralFile file;
  int line_number = 0;
  while (!text.empty()) {
    ++line_number;
    size_t end = text.find('\n');
    std::string_view line = Trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty() || line.front() == '#') continue;
    size_t eq = line.find('=');
    Status applied = eq == std::string_view::npos
                         ? Status(InvalidArgumentError("expected \"name = value\""))
                         : ApplyLine(Trim(line.substr(0, eq)), Trim(line.substr(eq + 1)), file);
    if (!applied) {
      return applied.error().At({.file = std::string(filename), .line = line_number});
    }
  }
  return file;
}

Result<LiteralFile> ReadLiteralFile(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFileBytes(path));
  return ParseLiteralFile(text, path);
}

}  // namespace kiln::runtime::io
