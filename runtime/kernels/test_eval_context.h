// Test support: an EvalContext that runs small scalar computations (reducers,
// comparators, combiners) without the real evaluator, plus helpers to parse a
// module and run one kernel on literal operands. Header-only, for *_test.cc.
#pragma once

#include <bit>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/parser.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime::testing {

class ScalarTestContext : public EvalContext {
 public:
  Result<hlo::Literal> Call(const hlo::Computation& computation,
                            std::span<const hlo::Literal* const> args) override {
    ++calls;
    std::unordered_map<const hlo::Instruction*, hlo::Literal> values;
    for (const auto& owned : computation.instructions()) {
      const hlo::Instruction* instr = owned.get();
      auto operand = [&](int64_t i) -> const hlo::Literal& { return values.at(instr->operand(i)); };
      hlo::Literal out;
      switch (instr->opcode()) {
        case hlo::Opcode::kParameter:
          out = *args[instr->parameter_number()];
          break;
        case hlo::Opcode::kConstant:
          out = *instr->literal();
          break;
        case hlo::Opcode::kTuple: {
          std::vector<hlo::Literal> elements;
          for (int64_t i = 0; i < instr->operand_count(); ++i) elements.push_back(operand(i));
          out = hlo::Literal::Tuple(std::move(elements));
          break;
        }
        case hlo::Opcode::kSelect:
          out = GetElementAs<bool>(operand(0), 0) ? operand(1) : operand(2);
          break;
        case hlo::Opcode::kCompare: {
          KILN_ASSIGN_OR_RETURN(hlo::Comparison cmp, hlo::GetComparison(*instr));
          out = hlo::Literal(instr->shape());
          SetElementFrom<bool>(out, 0, Compare(cmp, operand(0), operand(1)));
          break;
        }
        default: {
          out = hlo::Literal(instr->shape());
          if (!Arithmetic(instr->opcode(), instr->operands(), values, out)) {
            return UnimplementedError("test context: unsupported op " + instr->OpcodeText());
          }
        }
      }
      values[instr] = std::move(out);
    }
    return values.at(computation.root());
  }

  Status Charge(int64_t elements) override {
    charged += elements;
    if (charged > budget) return ResourceExhaustedError("step budget exhausted");
    return Ok();
  }

  uint64_t NextRngSeed() override { return seed++; }

  int64_t calls = 0;
  int64_t charged = 0;
  int64_t budget = int64_t{1} << 40;
  uint64_t seed = 42;

 private:
  static int64_t TotalOrderKey(double v) {
    int64_t bits = std::bit_cast<int64_t>(v);
    return bits < 0 ? bits ^ INT64_MAX : bits;
  }

  static bool Compare(const hlo::Comparison& cmp, const hlo::Literal& a, const hlo::Literal& b) {
    double x = GetElementAs<double>(a, 0), y = GetElementAs<double>(b, 0);
    if (cmp.type == hlo::ComparisonType::kTotalOrder) {
      x = static_cast<double>(TotalOrderKey(x));
      y = static_cast<double>(TotalOrderKey(y));
    }
    switch (cmp.direction) {
      case hlo::ComparisonDirection::kEq: return x == y;
      case hlo::ComparisonDirection::kNe: return x != y;
      case hlo::ComparisonDirection::kGe: return x >= y;
      case hlo::ComparisonDirection::kGt: return x > y;
      case hlo::ComparisonDirection::kLe: return x <= y;
      case hlo::ComparisonDirection::kLt: return x < y;
    }
    return false;
  }

  static bool Arithmetic(hlo::Opcode op, std::span<hlo::Instruction* const> operands,
                         const std::unordered_map<const hlo::Instruction*, hlo::Literal>& values,
                         hlo::Literal& out) {
    const hlo::Literal& a = values.at(operands[0]);
    const bool is_float = hlo::IsFloatingPoint(out.shape().element_type());
    if (op == hlo::Opcode::kConvert || op == hlo::Opcode::kNegate) {
      double v = GetElementAs<double>(a, 0);
      SetElementFrom<double>(out, 0, op == hlo::Opcode::kNegate ? -v : v);
      return true;
    }
    if (operands.size() != 2) return false;
    const hlo::Literal& b = values.at(operands[1]);
    if (is_float) {
      double x = GetElementAs<double>(a, 0), y = GetElementAs<double>(b, 0), r;
      switch (op) {
        case hlo::Opcode::kAdd: r = x + y; break;
        case hlo::Opcode::kSubtract: r = x - y; break;
        case hlo::Opcode::kMultiply: r = x * y; break;
        case hlo::Opcode::kDivide: r = x / y; break;
        case hlo::Opcode::kMaximum: r = std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y); break;
        case hlo::Opcode::kMinimum: r = std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y); break;
        default: return false;
      }
      SetElementFrom<double>(out, 0, r);
      return true;
    }
    int64_t x = GetElementAs<int64_t>(a, 0), y = GetElementAs<int64_t>(b, 0), r;
    switch (op) {
      case hlo::Opcode::kAdd: r = static_cast<int64_t>(uint64_t(x) + uint64_t(y)); break;
      case hlo::Opcode::kSubtract: r = static_cast<int64_t>(uint64_t(x) - uint64_t(y)); break;
      case hlo::Opcode::kMultiply: r = static_cast<int64_t>(uint64_t(x) * uint64_t(y)); break;
      case hlo::Opcode::kMaximum: r = std::max(x, y); break;
      case hlo::Opcode::kMinimum: r = std::min(x, y); break;
      case hlo::Opcode::kAnd: r = x & y; break;
      case hlo::Opcode::kOr: r = x | y; break;
      default: return false;
    }
    SetElementFrom<int64_t>(out, 0, r);
    return true;
  }
};

// Parses `text` (a module whose entry root is the instruction under test)
// and keeps the module alive for the test.
inline std::unique_ptr<hlo::Module> ParseOrDie(std::string_view text) {
  auto module = hlo::ParseModule(text);
  EXPECT_TRUE(module.has_value()) << (module ? "" : module.error().ToString());
  return module ? std::move(*module) : nullptr;
}

inline hlo::Literal LiteralOrDie(std::string_view text) {
  auto lit = hlo::ParseLiteral(text);
  EXPECT_TRUE(lit.has_value()) << text << ": " << (lit ? "" : lit.error().ToString());
  return lit ? std::move(*lit) : hlo::Literal();
}

// Runs the kernel for the entry root of `hlo_text` on `args` (literal texts).
inline Result<hlo::Literal> RunRoot(std::string_view hlo_text, std::vector<std::string> args,
                                    ScalarTestContext* ctx_out = nullptr) {
  auto module = hlo::ParseModule(hlo_text);
  if (!module) return std::unexpected(module.error());
  const hlo::Instruction& root = *(*module)->entry()->root();
  KernelFn kernel = FindHeavyKernel(root.opcode());
  if (kernel == nullptr) return UnimplementedError("no kernel for " + root.OpcodeText());
  std::vector<hlo::Literal> values;
  for (const std::string& text : args) {
    auto lit = hlo::ParseLiteral(text);
    if (!lit) return std::unexpected(lit.error());
    values.push_back(std::move(*lit));
  }
  std::vector<const hlo::Literal*> pointers;
  for (const hlo::Literal& v : values) pointers.push_back(&v);
  ScalarTestContext local;
  ScalarTestContext& ctx = ctx_out != nullptr ? *ctx_out : local;
  return kernel(root, pointers, ctx);
}

}  // namespace kiln::runtime::testing
