// Hostile structure through the HLO front end: call graphs nested to the
// limit and far beyond it (the 10,000-deep chain that crashed `kiln serve`),
// call graphs whose paths multiply, operand chains a million long, tuples and
// literals nested to the limit, shapes inferred without bound and deeply
// braced attribute values. Parse, verify, fingerprint, print and module
// equality must each answer (a value or an error saying where and why) on a
// thread with a small stack, never crash or run away.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "compiler/hlo/call_nesting.h"
#include "compiler/hlo/deep_modules_test_util.h"
#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/module_equal.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"

namespace kiln::hlo {
namespace {

using testing::kAllNestings;
using testing::kCheckedStackBytes;
using testing::Nesting;
using testing::NestingName;
using testing::RunWithStack;

// Sanitizer builds run the parser about ten times slower: shorter chains,
// still far beyond what a recursive walk survives.
constexpr int64_t kLongChain = testing::kSanitized ? 200'000 : 1'000'000;

// "file:line:col" of byte `offset` of `text`.
std::string PositionOf(const std::string& text, size_t offset, const std::string& file) {
  const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
  const size_t line_start = text.rfind('\n', offset - 1);
  const size_t column = offset - (line_start == std::string::npos ? 0 : line_start + 1) + 1;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

// Parses, verifies, fingerprints and prints `text`; the printed text must
// parse back to an equal module with the same key.
void ExpectFrontEndHandles(const std::string& text) {
  Result<std::unique_ptr<Module>> module = ParseModule(text, "deep.hlo");
  ASSERT_TRUE(module) << module.error().ToString();
  Status verified = VerifyModule(**module);
  ASSERT_TRUE(verified) << verified.error().ToString();
  Result<Fingerprint> key = FingerprintModule(**module, {});
  ASSERT_TRUE(key) << key.error().ToString();
  const std::string printed = PrintModule(**module);
  Result<std::unique_ptr<Module>> again = ParseModule(printed, "printed.hlo");
  ASSERT_TRUE(again) << again.error().ToString();
  std::string why;
  EXPECT_TRUE(ModulesEqual(**module, **again, &why)) << why;
  Result<Fingerprint> again_key = FingerprintModule(**again, {});
  ASSERT_TRUE(again_key) << again_key.error().ToString();
  EXPECT_EQ(key->key, again_key->key);
}

// A module built in memory, not parsed: c0 negates, cK calls c{K-1}; the
// last is the entry. `levels` computations in all.
std::unique_ptr<Module> BuildCallChain(int levels) {
  auto module = std::make_unique<Module>("built");
  const Shape shape(PrimitiveType::kF32, {8});
  Computation* below = nullptr;
  for (int k = 0; k < levels; ++k) {
    auto comp = std::make_unique<Computation>("c" + std::to_string(k));
    Instruction* p = comp->AddInstruction(Instruction::CreateParameter(0, shape, "p"));
    InstructionPtr r;
    if (below == nullptr) {
      r = Instruction::Create(Opcode::kNegate, shape, {p}, "r");
    } else {
      r = Instruction::Create(Opcode::kCall, shape, {p}, "r");
      Attribute to_apply;
      to_apply.name = "to_apply";
      to_apply.kind = Attribute::Kind::kComputations;
      to_apply.computations = {below};
      r->AddAttribute(std::move(to_apply));
    }
    comp->set_root(comp->AddInstruction(std::move(r)));
    below = module->AddComputation(std::move(comp), /*is_entry=*/k + 1 == levels);
  }
  return module;
}

// ------------------------------------------------------------ call nesting

TEST(CallNestingTest, EveryKindOfCallNestsToTheLimit) {
  for (Nesting kind : kAllNestings) {
    SCOPED_TRACE(NestingName(kind));
    RunWithStack(kCheckedStackBytes, [&] { ExpectFrontEndHandles(testing::NestedModule(kind, kMaxCallNesting)); });
  }
}

TEST(CallNestingTest, OneLevelBeyondTheLimitIsRejectedAtTheCall) {
  const std::string below = "%c" + std::to_string(kMaxCallNesting - 1);
  for (Nesting kind : kAllNestings) {
    SCOPED_TRACE(NestingName(kind));
    const std::string text = testing::NestedModule(kind, kMaxCallNesting + 1);
    // The entry is the one computation too deep; the error points at its
    // reference to the computation below.
    const size_t entry = text.find("ENTRY");
    const size_t reference = text.find("=" + below, entry) + 1;
    Result<std::unique_ptr<Module>> module = ParseModule(text, "deep.hlo");
    ASSERT_FALSE(module);
    const std::string& message = module.error().ToString();
    EXPECT_TRUE(message.starts_with(PositionOf(text, reference, "deep.hlo") + ": calling " + below +
                                    " here nests computations " + std::to_string(kMaxCallNesting + 1) +
                                    " deep (%main down to %"))
        << message;
    EXPECT_NE(message.find("calls may nest at most " + std::to_string(kMaxCallNesting) + " computations deep"),
              std::string::npos)
        << message;
  }
}

// The module of the hostile-input report: c0 .. c9999 and an entry.
TEST(CallNestingTest, TenThousandDeepCallChainIsRejectedWhereItCrossesTheLimit) {
  for (int depth : {5'000, 10'000, 100'000}) {
    SCOPED_TRACE(depth);
    const std::string text = testing::CallChainModule(depth);
    RunWithStack(kCheckedStackBytes, [&] {
      Result<std::unique_ptr<Module>> module = ParseModule(text, "deep.hlo");
      ASSERT_FALSE(module);
      const size_t reference = text.find("to_apply=%c" + std::to_string(kMaxCallNesting - 1) + "\n") + 9;
      EXPECT_EQ(module.error().ToString(),
                PositionOf(text, reference, "deep.hlo") + ": " + testing::CallChainTooDeepMessage(kMaxCallNesting));
    });
  }
}

TEST(CallNestingTest, ModulesBuiltInMemoryAreCheckedByTheVerifier) {
  RunWithStack(kCheckedStackBytes, [] {
    std::unique_ptr<Module> at_limit = BuildCallChain(kMaxCallNesting);
    EXPECT_TRUE(VerifyModule(*at_limit));
    EXPECT_TRUE(FingerprintModule(*at_limit, {}));

    std::unique_ptr<Module> deep = BuildCallChain(10'000);
    Status verified = VerifyModule(*deep);
    ASSERT_FALSE(verified);
    const std::string limit = std::to_string(kMaxCallNesting);
    EXPECT_EQ(verified.error().ToString(),
              "computation %c" + limit + ": calls nest " + std::to_string(kMaxCallNesting + 1) +
                  " computations deep (down to %c0); calls may nest at most " + limit + " computations deep");
    // The fingerprint does not rely on the verifier having run: it walks
    // the call graph without recursion, at any depth.
    Result<Fingerprint> key = FingerprintModule(*deep, {});
    ASSERT_TRUE(key) << key.error().ToString();
    EXPECT_EQ(key->called_computations.size(), 9'999u);
  });
}

// c{k} calls c{k-1} twice: 2^(limit-1) call paths. Every walk must take each
// computation once.
TEST(CallNestingTest, CallPathsThatMultiplyAreWalkedOnce) {
  RunWithStack(kCheckedStackBytes, [] { ExpectFrontEndHandles(testing::FanOutCallModule(kMaxCallNesting, 2)); });
}

// ------------------------------------------------------------ operand chains

TEST(OperandChainTest, MillionLongChainsParseVerifyFingerprintAndPrint) {
  RunWithStack(kCheckedStackBytes, [] {
    {
      SCOPED_TRACE("negate");
      ExpectFrontEndHandles(testing::OperandChainModule(kLongChain, "negate"));
    }
    {
      SCOPED_TRACE("opt-barrier");
      ExpectFrontEndHandles(testing::OperandChainModule(kLongChain / 4, "opt-barrier"));
    }
    {
      SCOPED_TRACE("after-all");
      ExpectFrontEndHandles(testing::AfterAllChainModule(kLongChain / 4));
    }
    {
      SCOPED_TRACE("tuple/get-tuple-element");
      ExpectFrontEndHandles(testing::TupleElementChainModule(kLongChain / 4));
    }
  });
}

// ------------------------------------------------------------ tuples and literals

TEST(TupleNestingTest, WrittenShapesAndLiteralsNestToTheLimit) {
  const std::string shape = testing::NestedTuple(64, "f32[2]");
  const std::string literal = testing::NestedTuple(64, "{1, 2}");
  const std::string text = "HloModule tuples\n\nENTRY %main {\n  %p = " + shape + " parameter(0)\n  %c = " + shape +
                           " constant(" + literal + ")\n  ROOT %t = (" + shape + ") tuple(%c)\n}\n";
  Result<std::unique_ptr<Module>> rejected = ParseModule(text, "tuples.hlo");
  ASSERT_FALSE(rejected);  // the root's shape nests 65 deep
  EXPECT_NE(rejected.error().ToString().find("shape nested too deeply (tuples nest at most 64 deep)"),
            std::string::npos)
      << rejected.error().ToString();

  const std::string inner = testing::NestedTuple(63, "f32[2]");
  const std::string at_limit = "HloModule tuples\n\nENTRY %main {\n  %p = " + inner + " parameter(0)\n  %c = " +
                               inner + " constant(" + testing::NestedTuple(63, "{1, 2}") + ")\n  ROOT %t = (" +
                               inner + ", " + inner + ") tuple(%p, %c)\n}\n";
  RunWithStack(kCheckedStackBytes, [&] { ExpectFrontEndHandles(at_limit); });
}

TEST(TupleNestingTest, InferredShapesAreBoundedLikeWrittenOnes) {
  RunWithStack(kCheckedStackBytes, [] { ExpectFrontEndHandles(testing::InferredTupleModule(64, 1)); });

  const std::string text = testing::InferredTupleModule(20'000, 1);
  Result<std::unique_ptr<Module>> deep = ParseModule(text, "tuples.hlo");
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().ToString(), PositionOf(text, text.find("tuple(%t64)"), "tuples.hlo") +
                                         ": the shape of %t65 would nest tuples 65 deep; shapes may nest at "
                                         "most 64 deep");

  // Each line doubles the shape: 40 lines would ask for 2^41 shapes.
  const std::string doubling = testing::InferredTupleModule(40, 2);
  Result<std::unique_ptr<Module>> wide = ParseModule(doubling, "tuples.hlo");
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.error().ToString(), PositionOf(doubling, doubling.find("tuple(%t19, %t19)"), "tuples.hlo") +
                                         ": the shapes inferred for this module hold more than 2097152 tuple "
                                         "elements by %t20; write the shapes out");
}

TEST(TupleNestingTest, DeeplyBracedAttributesAndLiteralsAreReadWithoutRecursion) {
  const std::string braces = std::string(100'000, '{') + std::string(100'000, '}');
  const std::string attribute =
      "HloModule braces\n\nENTRY %main {\n  %p = f32[2] parameter(0)\n  ROOT %n = f32[2] negate(%p), "
      "kiln_note=" +
      braces + "\n}\n";
  RunWithStack(kCheckedStackBytes, [&] { ExpectFrontEndHandles(attribute); });

  const std::string literal =
      "HloModule braces\n\nENTRY %main {\n  ROOT %c = f32[2] constant(" + braces + ")\n}\n";
  Result<std::unique_ptr<Module>> module = ParseModule(literal, "braces.hlo");
  ASSERT_FALSE(module);
  EXPECT_TRUE(module.error().ToString().starts_with(PositionOf(literal, literal.find("{{") + 1, "braces.hlo") +
                                                    ": expected a number for f32"))
      << module.error().ToString();
}

}  // namespace
}  // namespace kiln::hlo
