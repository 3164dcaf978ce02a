// Helpers for the evaluator's tests: parse HLO text and literals, evaluate.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/parser.h"
#include "runtime/eval/evaluator.h"

namespace kiln::runtime::testing {

// A literal from its sidecar text ("f32[2] {1, 2}"); fails the test on a
// parse error.
inline hlo::Literal Lit(std::string_view text) {
  Result<hlo::Literal> lit = hlo::ParseLiteral(text);
  EXPECT_TRUE(lit.has_value()) << text << ": " << (lit ? "" : lit.error().ToString());
  return lit ? std::move(*lit) : hlo::Literal();
}

// Parses `hlo_text` and evaluates its entry on `args`.
inline Result<hlo::Literal> Run(std::string_view hlo_text, const std::vector<hlo::Literal>& args = {},
                                const EvalOptions& options = {}) {
  Result<std::unique_ptr<hlo::Module>> module = hlo::ParseModule(hlo_text);
  if (!module) return std::unexpected(module.error());
  return EvaluateModule(**module, args, options);
}

// Evaluates and returns the result as sidecar text ("f32[2] {1, 2}"), or
// "error: <message>".
inline std::string RunToText(std::string_view hlo_text, const std::vector<hlo::Literal>& args = {},
                             const EvalOptions& options = {}) {
  Result<hlo::Literal> result = Run(hlo_text, args, options);
  if (!result) return "error: " + result.error().ToString();
  return result->ToString();
}

// A module whose entry applies one op: `ROOT r = <result> <op_text>` over
// parameters declared in `params` ("f32[3] p0, f32[3] p1").
inline std::string OneOp(std::string_view params, std::string_view result,
                         std::string_view op_text) {
  std::string body = "HloModule m\n\nENTRY e {\n";
  int n = 0;
  std::string_view rest = params;
  while (!rest.empty()) {
    size_t comma = rest.find(", ");
    std::string_view decl = rest.substr(0, comma);
    size_t space = decl.rfind(' ');
    body += "  " + std::string(decl.substr(space + 1)) + " = " +
            std::string(decl.substr(0, space)) + " parameter(" + std::to_string(n++) + ")\n";
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
  }
  body += "  ROOT r = " + std::string(result) + " " + std::string(op_text) + "\n}\n";
  return body;
}

}  // namespace kiln::runtime::testing
