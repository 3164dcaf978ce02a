// Decoders for windows, slices and padding (op_attributes.h).
#include "compiler/hlo/op_attributes.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/lexer.h"
#include "compiler/hlo/op_attributes_util.h"

namespace kiln::hlo {

using op_attributes_internal::Annotate;
using op_attributes_internal::ParseInt;
using op_attributes_internal::RequiredText;

namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

// `3x3`, `3` -> {3, 3}, {3}.
Result<std::vector<int64_t>> ParseDxD(std::string_view s) {
  std::vector<int64_t> out;
  for (std::string_view part : Split(s, 'x')) {
    KILN_ASSIGN_OR_RETURN(int64_t v, ParseInt(part));
    out.push_back(v);
  }
  return out;
}

// `1_1x0_2_1` -> {{1,1,0}, {0,2,1}}; interior is 0 when absent.
Result<std::vector<std::array<int64_t, 3>>> ParsePads(std::string_view s, bool allow_interior) {
  std::vector<std::array<int64_t, 3>> out;
  for (std::string_view part : Split(s, 'x')) {
    std::vector<std::string_view> fields = Split(part, '_');
    if (fields.size() != 2 && !(allow_interior && fields.size() == 3)) {
      return InvalidArgumentError("malformed padding '" + std::string(part) + "'");
    }
    std::array<int64_t, 3> v = {0, 0, 0};
    for (size_t i = 0; i < fields.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(v[i], ParseInt(fields[i]));
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace

// ---- Windows ----------------------------------------------------------------

Result<Window> ParseWindow(std::string_view text) {
  Lexer lex(text);
  if (lex.Next().kind != TokKind::kLbrace) return InvalidArgumentError("expected '{'");
  std::vector<int64_t> size, stride, lhs_dilate, rhs_dilate, reversal;
  std::vector<std::array<int64_t, 3>> pad;
  bool seen_size = false;
  while (true) {
    Token key = lex.Next();
    if (key.kind == TokKind::kRbrace) break;
    if (key.kind != TokKind::kAttributeName) {
      return InvalidArgumentError("expected a window field such as size=, got '" + std::string(key.text) + "'");
    }
    Token value = lex.Next();
    std::string_view field = key.text;
    if (field == "pad") {
      if (value.kind != TokKind::kPad) return InvalidArgumentError("pad expects low_high values");
      KILN_ASSIGN_OR_RETURN(pad, ParsePads(value.text, /*allow_interior=*/false));
      continue;
    }
    if (value.kind != TokKind::kDxD && value.kind != TokKind::kInt) {
      return InvalidArgumentError(std::string(field) + " expects NxM values, got '" + std::string(value.text) + "'");
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> v, ParseDxD(value.text));
    if (field == "size") {
      size = std::move(v);
      seen_size = true;
    } else if (field == "stride") {
      stride = std::move(v);
    } else if (field == "lhs_dilate") {
      lhs_dilate = std::move(v);
    } else if (field == "rhs_dilate") {
      rhs_dilate = std::move(v);
    } else if (field == "rhs_reversal") {
      reversal = std::move(v);
    } else {
      return InvalidArgumentError("unknown window field '" + std::string(field) + "'");
    }
  }
  if (lex.Next().kind != TokKind::kEof) return InvalidArgumentError("unexpected text after window");
  if (!seen_size) return InvalidArgumentError("window has no size");
  const size_t rank = size.size();
  auto check = [&](size_t n, const char* what) -> Status {
    if (n != 0 && n != rank) {
      return InvalidArgumentError(std::string(what) + " has " + std::to_string(n) + " entries but size has " +
                                  std::to_string(rank));
    }
    return Ok();
  };
  KILN_RETURN_IF_ERROR(check(stride.size(), "stride"));
  KILN_RETURN_IF_ERROR(check(pad.size(), "pad"));
  KILN_RETURN_IF_ERROR(check(lhs_dilate.size(), "lhs_dilate"));
  KILN_RETURN_IF_ERROR(check(rhs_dilate.size(), "rhs_dilate"));
  KILN_RETURN_IF_ERROR(check(reversal.size(), "rhs_reversal"));
  Window w;
  w.dimensions.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    WindowDimension& d = w.dimensions[i];
    d.size = size[i];
    if (!stride.empty()) d.stride = stride[i];
    if (!pad.empty()) {
      d.padding_low = pad[i][0];
      d.padding_high = pad[i][1];
    }
    if (!lhs_dilate.empty()) d.base_dilation = lhs_dilate[i];
    if (!rhs_dilate.empty()) d.window_dilation = rhs_dilate[i];
    if (!reversal.empty()) {
      if (reversal[i] != 0 && reversal[i] != 1) return InvalidArgumentError("rhs_reversal values must be 0 or 1");
      d.window_reversal = reversal[i] == 1;
    }
  }
  return w;
}

Result<Window> GetWindow(const Instruction& instr) {
  if (instr.FindAttribute("window") == nullptr) return Window{};
  KILN_ASSIGN_OR_RETURN(const std::pmr::string* text, RequiredText(instr, "window"));
  return Annotate(instr, "window", ParseWindow(*text));
}

// ---- Slices and padding ---------------------------------------------------

Result<SliceSpec> ParseSliceSpec(std::string_view text) {
  Lexer lex(text);
  if (lex.Next().kind != TokKind::kLbrace) return InvalidArgumentError("expected '{'");
  SliceSpec spec;
  Token t = lex.Next();
  while (t.kind != TokKind::kRbrace) {
    if (t.kind != TokKind::kLsquare) return InvalidArgumentError("expected '[start:limit]'");
    int64_t v[3] = {0, 0, 1};
    int n = 0;
    while (true) {
      Token num = lex.Next();
      if (num.kind != TokKind::kInt) return InvalidArgumentError("expected an integer in slice bounds");
      KILN_ASSIGN_OR_RETURN(v[n], ParseInt(num.text));
      ++n;
      Token sep = lex.Next();
      if (sep.kind == TokKind::kRsquare) break;
      if (sep.kind != TokKind::kColon || n == 3) return InvalidArgumentError("expected ':' or ']' in slice");
    }
    if (n < 2) return InvalidArgumentError("slice dimension needs start:limit");
    spec.starts.push_back(v[0]);
    spec.limits.push_back(v[1]);
    spec.strides.push_back(v[2]);
    t = lex.Next();
    if (t.kind == TokKind::kComma) {
      t = lex.Next();
    } else if (t.kind != TokKind::kRbrace) {
      return InvalidArgumentError("expected ',' or '}' in slice");
    }
  }
  if (lex.Next().kind != TokKind::kEof) return InvalidArgumentError("unexpected text after slice");
  return spec;
}

Result<SliceSpec> GetSliceSpec(const Instruction& instr) {
  KILN_ASSIGN_OR_RETURN(const std::pmr::string* text, RequiredText(instr, "slice"));
  return Annotate(instr, "slice", ParseSliceSpec(*text));
}

Result<PaddingConfig> ParsePaddingConfig(std::string_view text) {
  PaddingConfig config;
  if (text.empty()) return config;  // rank 0
  Lexer lex(text);
  Token t = lex.Next();
  if (t.kind != TokKind::kPad || lex.Next().kind != TokKind::kEof) {
    return InvalidArgumentError("expected low_high[_interior] per dimension, got '" + std::string(text) + "'");
  }
  KILN_ASSIGN_OR_RETURN(auto pads, ParsePads(t.text, /*allow_interior=*/true));
  for (const auto& p : pads) config.dimensions.push_back({p[0], p[1], p[2]});
  return config;
}

Result<PaddingConfig> GetPaddingConfig(const Instruction& instr) {
  KILN_ASSIGN_OR_RETURN(const std::pmr::string* text, RequiredText(instr, "padding"));
  return Annotate(instr, "padding", ParsePaddingConfig(*text));
}

}  // namespace kiln::hlo
