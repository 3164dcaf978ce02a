// Helpers shared by the parser unit tests (parser_*_test.cc).
// They report failures through GoogleTest and return an empty value instead
// of crashing. Test-only code.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/module_equal.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"

namespace kiln::hlo::parser_testing {

inline Shape ShapeOrDie(std::string_view text) {
  Result<Shape> s = ParseShape(text);
  EXPECT_TRUE(s.has_value()) << text << ": " << s.error().ToString();
  return s.value_or(Shape());
}

inline std::unique_ptr<Module> ModuleOrDie(std::string_view text) {
  Result<std::unique_ptr<Module>> m = ParseModule(text, "test.hlo");
  EXPECT_TRUE(m.has_value()) << m.error().ToString() << "\n" << text;
  return m ? std::move(*m) : nullptr;
}

// The literal's bytes read as consecutive T values (bit patterns when T
// is an unsigned integer of the element's width).
template <typename T>
inline std::vector<T> Elements(const Literal& lit) {
  std::vector<T> out(lit.data().size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), lit.data().data(), out.size() * sizeof(T));
  return out;
}

// Print -> parse -> compare, and printing is a fixed point.
inline void ExpectModuleRoundTrip(const Module& m) {
  std::string printed = PrintModule(m);
  Result<std::unique_ptr<Module>> again = ParseModule(printed, "printed.hlo");
  ASSERT_TRUE(again.has_value()) << again.error().ToString() << "\n" << printed;
  std::string why;
  EXPECT_TRUE(ModulesEqual(m, **again, &why)) << why << "\n" << printed;
  EXPECT_EQ(PrintModule(**again), printed);
}

}  // namespace kiln::hlo::parser_testing
