// Unit tests of the module parser on small hand-written inputs, and of
// printing modules back.
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/hlo/module_equal.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/parser_test_util.h"
#include "compiler/hlo/printer.h"
#include "fuzz/regression_inputs.h"

namespace kiln::hlo::parser_testing {
namespace {

std::string ModuleError(std::string_view text) {
  Result<std::unique_ptr<Module>> m = ParseModule(text, "test.hlo");
  EXPECT_FALSE(m.has_value()) << "parsed unexpectedly:\n" << text;
  return m ? std::string() : m.error().ToString();
}

const Instruction* FindInstruction(const Computation& c, std::string_view name) {
  for (const auto& i : c.instructions()) {
    if (i->name() == name) return i.get();
  }
  return nullptr;
}

constexpr std::string_view kSmallModule = R"(HloModule small, entry_computation_layout={(f32[2]{0}, f32[2]{0})->f32[2]{0}}

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (a: f32[2], b: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0)
  %b = f32[2]{0} parameter(1)
  %c = f32[2]{0} add(%a, %b), metadata={op_name="jit(f)/add" source_file="x.py"}
  %zero = f32[] constant(0)
  %r = f32[] reduce(%c, %zero), dimensions={0}, to_apply=%add
  ROOT %out = f32[2]{0} broadcast(%r), dimensions={}
}
)";

TEST(ModuleParseTest, BuildsTheIr) {
  auto m = ModuleOrDie(kSmallModule);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "small");
  ASSERT_TRUE(m->entry_layout().has_value());
  EXPECT_EQ(m->entry_layout()->parameters.size(), 2u);
  EXPECT_EQ(m->entry_layout()->result, ShapeOrDie("f32[2]"));
  ASSERT_EQ(m->computations().size(), 2u);
  const Computation& add = *m->computations()[0];
  const Computation& main = *m->computations()[1];
  EXPECT_EQ(add.name(), "add");
  EXPECT_FALSE(add.is_entry());
  EXPECT_EQ(m->entry(), &main);
  EXPECT_TRUE(main.is_entry());
  EXPECT_EQ(main.instruction_count(), 6);
  EXPECT_EQ(main.root()->name(), "out");
  ASSERT_EQ(main.parameter_count(), 2);
  EXPECT_EQ(main.parameters()[1]->name(), "b");
  EXPECT_EQ(main.parameters()[1]->parameter_number(), 1);

  const Instruction* c = FindInstruction(main, "c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->opcode(), Opcode::kAdd);
  EXPECT_EQ(c->operand(0), main.parameters()[0]);
  EXPECT_EQ(c->operand(1), main.parameters()[1]);
  ASSERT_NE(c->AttributeText("metadata"), nullptr);
  EXPECT_EQ(*c->AttributeText("metadata"), R"({op_name="jit(f)/add" source_file="x.py"})");
  EXPECT_THAT(main.parameters()[0]->users(), ::testing::ElementsAre(c));

  const Instruction* r = FindInstruction(main, "r");
  ASSERT_NE(r, nullptr);
  EXPECT_THAT(r->called_computations(), ::testing::ElementsAre(m->computations()[0].get()));
  ASSERT_NE(r->AttributeText("dimensions"), nullptr);
  EXPECT_EQ(*r->AttributeText("dimensions"), "{0}");

  const Instruction* zero = FindInstruction(main, "zero");
  ASSERT_NE(zero, nullptr);
  ASSERT_NE(zero->literal(), nullptr);
  EXPECT_EQ(Elements<float>(*zero->literal()), (std::vector<float>{0.0f}));
  EXPECT_EQ(add.root()->name(), "sum");

  ExpectModuleRoundTrip(*m);
}

TEST(ModuleParseTest, HeaderAttributesAndExecutionThread) {
  auto m = ModuleOrDie(R"(HloModule h, is_scheduled=true, frontend_attributes={fingerprint="x,y"}, num_partitions=2

%side {
  ROOT %p = s32[] parameter(0)
}, execution_thread="side"

ENTRY %e {
  ROOT %p = s32[] parameter(0)
}
)");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->attributes().size(), 3u);
  EXPECT_EQ(m->attributes()[0].name, "is_scheduled");
  EXPECT_EQ(m->attributes()[0].value, "true");
  EXPECT_EQ(m->attributes()[1].kind, Attribute::Kind::kRaw);
  EXPECT_EQ(m->attributes()[1].value, R"({fingerprint="x,y"})");
  EXPECT_EQ(m->attributes()[2].value, "2");
  EXPECT_EQ(m->computations()[0]->execution_thread(), "side");
  EXPECT_EQ(m->computations()[1]->execution_thread(), "");
  ExpectModuleRoundTrip(*m);
}

// The thread name is a string: quotes and backslashes in it are escaped
// when printed.
// Found by fuzz/hlo_text_fuzzer (kept as fuzz/regressions/hlo_text/
// value_starting_with_equals): "use_global_device_ids= = s32[..." in a
// module header parsed, then printed as "use_global_device_ids==s32[...",
// which does not parse. A value never starts with '='.
TEST(ModuleParseTest, AnAttributeValueStartingWithEqualsIsAnError) {
  const std::string found = fuzz::RegressionInput("hlo_text", "value_starting_with_equals");
  ASSERT_FALSE(found.empty());
  EXPECT_NE(ModuleError(found).find("expected an attribute value, got '='"), std::string::npos) << ModuleError(found);
  EXPECT_NE(ModuleError("HloModule m, flag= =1\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
                .find("test.hlo:1:20: expected an attribute value, got '='"),
            std::string::npos)
      << ModuleError("HloModule m, flag= =1\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
  EXPECT_NE(ModuleError("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), flag= =1\n}\n")
                .find("expected an attribute value, got '='"),
            std::string::npos);
}

// The hlo_text fuzzer's round trip on its kept crashers (fuzz/regressions/
// hlo_text): each fails to parse, or prints to text that parses back to an
// equal module. name_then_arrow_in_a_value: "%main.3 ->rg" inside a domain
// attribute printed as "main.3->rg", which lexes as the name "main.3-".
// unknown_layout_item_swallowing_text: a layout item "ttt...T(" was kept as
// text up to its closing ')' two lines later, joined without spaces.
TEST(ModuleParseTest, KeptFuzzCrashersRoundTrip) {
  for (const char* name : {"value_starting_with_equals", "name_then_arrow_in_a_value",
                           "unknown_layout_item_swallowing_text"}) {
    const std::string input = fuzz::RegressionInput("hlo_text", name);
    ASSERT_FALSE(input.empty()) << name;
    Result<std::unique_ptr<Module>> module = ParseModule(input, name);
    if (!module) continue;
    const std::string printed = PrintModule(**module);
    Result<std::unique_ptr<Module>> reparsed = ParseModule(printed, "printed.hlo");
    ASSERT_TRUE(reparsed.has_value()) << name << ": " << reparsed.error().ToString() << "\n" << printed;
    std::string why;
    EXPECT_TRUE(ModulesEqual(**module, **reparsed, &why)) << name << ": " << why;
  }
}

TEST(ModuleParseTest, ExecutionThreadWithEscapesRoundTrips) {
  auto m = ModuleOrDie(
      "HloModule m\nc {\n ROOT p = f32[] parameter(0)\n}, execution_thread=\"a\\\"b\\\\c\"\n"
      "ENTRY e {\n ROOT p = f32[] parameter(0)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->computations()[0]->execution_thread(), "a\"b\\c");
  ExpectModuleRoundTrip(*m);
}

TEST(ModuleParseTest, EntryDefaultsToLastComputation) {
  auto m = ModuleOrDie("HloModule m\nc1 {\n ROOT p = f32[] parameter(0)\n}\nc2 {\n ROOT q = f32[] parameter(0)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->name(), "c2");
  EXPECT_TRUE(m->entry()->is_entry());
  EXPECT_FALSE(m->computations()[0]->is_entry());
}

TEST(ModuleParseTest, CommentsAreIgnored) {
  auto plain = ModuleOrDie(kSmallModule);
  std::string commented = R"(// leading comment
HloModule small, /* header */ entry_computation_layout={(f32[2]{0}, f32[2]{0})->f32[2]{0}}
// CHECK: something
%add (x: f32[], y: f32[]) -> f32[] { // trailing
  %x = f32[] parameter(0) /* after */
  %y = /* inside */ f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %x, /* arg */ f32[] %y)
}
/* multi
   line { ( [ */
ENTRY %main (a: f32[2], b: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0)
  %b = f32[2]{0} parameter(1)
  %c = f32[2]{0} add(%a, %b), metadata={op_name="jit(f)/add" source_file="x.py"} // x
  %zero = f32[] constant(/* zero */ 0)
  %r = f32[] reduce(%c, %zero), dimensions={ /* d */ 0}, to_apply=%add
  ROOT %out = f32[2]{0} broadcast(%r), dimensions={}
}
// trailing comment without newline)";
  auto with_comments = ModuleOrDie(commented);
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(with_comments, nullptr);
  std::string why;
  EXPECT_TRUE(ModulesEqual(*plain, *with_comments, &why)) << why;
}

TEST(ModuleParseTest, AttributeSpacingIsCanonical) {
  auto spaced = ModuleOrDie(R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  t = f32[3,2] transpose(p), dimensions={1, 0}
  ROOT c = f32[1,1,3,2] convolution(f32[1,1,3,2] parameter(1), f32[1,1,2,2] parameter(2)), window={size=1x2 stride=1x1 pad=0_0x0_1}, dim_labels=b01f_01io->b01f, sharding={devices=[2,1]0,1}
}
)");
  auto tight = ModuleOrDie(R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  t = f32[3,2] transpose(p), dimensions={1,0}
  ROOT c = f32[1,1,3,2] convolution(f32[1,1,3,2] parameter(1), f32[1,1,2,2] parameter(2)), window={size=1x2   stride=1x1
      pad=0_0x0_1}, dim_labels=b01f_01io->b01f, sharding={ devices=[2, 1] 0, 1 }
}
)");
  ASSERT_NE(spaced, nullptr);
  ASSERT_NE(tight, nullptr);
  const Computation& a = *spaced->entry();
  const Computation& b = *tight->entry();
  EXPECT_EQ(*FindInstruction(a, "t")->AttributeText("dimensions"), "{1,0}");
  EXPECT_EQ(*FindInstruction(b, "t")->AttributeText("dimensions"), "{1,0}");
  EXPECT_EQ(*a.root()->AttributeText("window"), "{size=1x2 stride=1x1 pad=0_0x0_1}");
  EXPECT_EQ(*b.root()->AttributeText("window"), *a.root()->AttributeText("window"));
  EXPECT_EQ(*b.root()->AttributeText("sharding"), *a.root()->AttributeText("sharding"));
  EXPECT_EQ(*b.root()->AttributeText("dim_labels"), "b01f_01io->b01f");
  std::string why;
  EXPECT_TRUE(ModulesEqual(*spaced, *tight, &why)) << why;
  ExpectModuleRoundTrip(*spaced);
}

TEST(ModuleParseTest, NestedInstructionOperands) {
  auto m = ModuleOrDie(R"(HloModule m
ENTRY e {
  ROOT r = s32[] add(s32[] parameter(0), s32[] multiply(s32[] parameter(1), s32[] constant(3)))
}
)");
  ASSERT_NE(m, nullptr);
  const Computation& e = *m->entry();
  ASSERT_EQ(e.instruction_count(), 5);
  // Nested instructions come before their user, operands before users.
  EXPECT_EQ(e.instructions()[0]->opcode(), Opcode::kParameter);
  EXPECT_EQ(e.instructions()[1]->opcode(), Opcode::kParameter);
  EXPECT_EQ(e.instructions()[2]->opcode(), Opcode::kConstant);
  EXPECT_EQ(e.instructions()[3]->opcode(), Opcode::kMultiply);
  EXPECT_EQ(e.instructions()[4]->opcode(), Opcode::kAdd);
  const Instruction* root = e.root();
  ASSERT_EQ(root->operand_count(), 2);
  EXPECT_EQ(root->operand(0)->parameter_number(), 0);
  EXPECT_EQ(root->operand(1)->opcode(), Opcode::kMultiply);
  EXPECT_EQ(Elements<int32_t>(*root->operand(1)->operand(1)->literal()), (std::vector<int32_t>{3}));
  EXPECT_EQ(e.parameter_count(), 2);
  // Every nested instruction gets a distinct name.
  std::set<std::string> names;
  for (const auto& i : e.instructions()) names.emplace(i->name());
  EXPECT_EQ(names.size(), 5u);
  ExpectModuleRoundTrip(*m);
}

// Operand lists are read from the bytes when written "(%a, %b)" and
// through tokens otherwise; every spelling gives the same operands, and an
// unknown name is still reported where it is written.
TEST(ModuleParseTest, OperandListsInEverySpelling) {
  auto m = ModuleOrDie(R"(HloModule m
ENTRY e {
  %a = f32[2] parameter(0)
  %b.1-x = f32[2] parameter(1)
  %c = f32[2] add(%a, %b.1-x)
  %d = f32[2] add(%a,%b.1-x)
  %e = f32[2] add( %a , %b.1-x )
  %f = f32[2] add(%a,
                  /* second */ %b.1-x)
  %g = f32[2] add(a, b.1-x)
  %h = f32[2] add(f32[2] %a, f32[2] %b.1-x)
  %t = token[] after-all()
  ROOT %r = (f32[2], f32[2], f32[2], f32[2], f32[2], f32[2]) tuple(%c, %d, %e, %f, %g, %h)
}
)");
  const Computation& e = *m->entry();
  const Instruction* a = e.instructions()[0].get();
  const Instruction* b = e.instructions()[1].get();
  for (int i = 2; i < 8; ++i) {
    const Instruction& add = *e.instructions()[i];
    ASSERT_EQ(add.operand_count(), 2) << add.name();
    EXPECT_EQ(add.operand(0), a) << add.name();
    EXPECT_EQ(add.operand(1), b) << add.name();
  }
  EXPECT_EQ(e.instructions()[8]->operand_count(), 0);
  EXPECT_EQ(e.root()->operand_count(), 6);

  Result<std::unique_ptr<Module>> bad = ParseModule(R"(HloModule m
ENTRY e {
  %a = f32[2] parameter(0)
  ROOT %c = f32[2] add(%a, %missing)
}
)", "bad.hlo");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().ToString().find("bad.hlo:4:28: operand %missing is not defined"), std::string::npos)
      << bad.error().ToString();
}

TEST(ModuleParseTest, NamesWithoutSpaces) {
  auto m = ModuleOrDie("HloModule m\nENTRY e{\nx=f32[2]parameter(0)\ny=f32[2]negate(x),metadata={}\nROOT z=f32[2]add(x,y)\n}");
  ASSERT_NE(m, nullptr);
  const Computation& e = *m->entry();
  ASSERT_EQ(e.instruction_count(), 3);
  EXPECT_EQ(e.instructions()[0]->name(), "x");
  EXPECT_EQ(e.instructions()[1]->opcode(), Opcode::kNegate);
  EXPECT_EQ(e.root()->name(), "z");
  EXPECT_EQ(e.root()->operand(1), e.instructions()[1].get());
  ExpectModuleRoundTrip(*m);
}

TEST(ModuleParseTest, ReferencesAsyncOpsAndControlPredecessors) {
  auto m = ModuleOrDie(R"(HloModule m

%cond (p: (s32[], f32[4])) -> pred[] {
  %p = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (p: (s32[], f32[4])) -> (s32[], f32[4]) {
  %p = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %v = f32[4] get-tuple-element(%p), index=1
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  ROOT %t = (s32[], f32[4]) tuple(%j, %v)
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]) tuple(%zero, %x)
  %w = (s32[], f32[4]) while(%init), condition=%cond, body=%body, control-predecessors={%zero}
  %start = ((f32[4]), f32[4], u32[]) negate-start(%x), control-predecessors={%w, %init}
  %done = f32[4] negate-done(%start)
  ROOT %out = f32[4] get-tuple-element(%w), index=1, control-predecessors={%done}
}
)");
  ASSERT_NE(m, nullptr);
  const Computation& main = *m->entry();
  const Instruction* w = FindInstruction(main, "w");
  ASSERT_NE(w, nullptr);
  EXPECT_THAT(w->called_computations(),
              ::testing::ElementsAre(m->computations()[0].get(), m->computations()[1].get()));
  ASSERT_EQ(w->control_predecessors().size(), 1u);
  EXPECT_EQ(w->control_predecessors()[0]->name(), "zero");
  const Instruction* start = FindInstruction(main, "start");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->opcode(), Opcode::kAsyncStart);
  EXPECT_EQ(start->async_wrapped_opcode(), "negate");
  EXPECT_EQ(start->OpcodeText(), "negate-start");
  EXPECT_EQ(start->control_predecessors().size(), 2u);
  EXPECT_EQ(FindInstruction(main, "done")->opcode(), Opcode::kAsyncDone);
  const Attribute* cp = main.root()->FindAttribute("control-predecessors");
  ASSERT_NE(cp, nullptr);
  EXPECT_EQ(cp->kind, Attribute::Kind::kInstructions);
  EXPECT_TRUE(cp->braced);
  ExpectModuleRoundTrip(*m);
}

TEST(ModuleParseTest, ErrorsNameFileLineColumnAndExpectation) {
  struct Case {
    std::string_view text;
    std::string_view prefix;
    std::string_view needle;
  };
  for (const Case& c : std::vector<Case>{
           {"", "test.hlo:1:1:", "expected 'HloModule'"},
           {"HloModule", "test.hlo:1:10:", "expected a module name"},
           {"HloModule m", "test.hlo:1:12:", "expected a computation"},
           {"HloModule m\nENTRY e {\n  p = f32[2] parameter(0\n}", "test.hlo:4:1:",
            "expected ')' after parameter number"},
           {"HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(q)\n}",
            "test.hlo:4:26:", "operand %q is not defined"},
           {"HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  p = f32[2] negate(p)\n}",
            "test.hlo:4:3:", "defined twice"},
           {"HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n  ROOT q = f32[] parameter(1)\n}",
            "test.hlo:4:3:", "more than one ROOT"},
           {"HloModule m\nENTRY e {\n  p = f32[] frobnicate(p)\n}", "test.hlo:3:13:",
            "unknown opcode 'frobnicate'"},
           // An unknown element type is not taken for an opcode.
           {"HloModule m\nENTRY e {\n  p = q99[2] parameter(0)\n}", "test.hlo:3:7:",
            "unknown element type 'q99'; element types are pred, s1,"},
           {"HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(f33[2] %p)\n}",
            "test.hlo:4:26:", "unknown element type 'f33' (did you mean f32?)"},
           {"HloModule m\nENTRY e {\n  p = (f32[], s31[2]) parameter(0)\n}", "test.hlo:3:15:",
            "unknown element type 's31' (did you mean s32?)"},
           {"HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=f\n}",
            "test.hlo:4:36:", "computation %f is not defined"},
           {"HloModule m\nENTRY a {\n ROOT p = f32[] parameter(0)\n}\nENTRY b {\n ROOT p = f32[] parameter(0)\n}",
            "test.hlo:5:1:", "more than one ENTRY"},
           {"HloModule m\nENTRY e {\n  p = f32[] parameter(0), sharding={replicated}, sharding={maximal}\n}",
            "test.hlo:3:50:", "given twice"},
           {"HloModule m\nENTRY e {\n  p = f32[2 parameter(0)\n}", "test.hlo:3:13:",
            "expected ',' or ']'"},
           {"HloModule m\nENTRY e {\n  c = f32[2] constant({1, 2, 3})\n}", "test.hlo:3:23:",
            "has 3 elements"},
           {"HloModule m\nENTRY e {\n  c = f32[] constant(0)", "test.hlo:3:24:",
            "expected an instruction or '}'"},
           {"HloModule m\nENTRY e {\n}", "test.hlo:3:1:", "has no instructions"},
           {"HloModule m\nENTRY e {\n  p = f32[] parameter(0), control-predecessors={nope}\n}",
            "test.hlo:3:49:", "control predecessor %nope"},
       }) {
    std::string message = ModuleError(c.text);
    EXPECT_TRUE(message.starts_with(c.prefix)) << c.text << "\n=> " << message;
    EXPECT_NE(message.find(c.needle), std::string::npos) << c.text << "\n=> " << message;
  }
}

TEST(ModuleParseTest, ErrorsAreInvalidArgumentsPlacedAtFileLineAndColumn) {
  Result<std::unique_ptr<Module>> m = ParseModule("HloModule m\nENTRY e {\n  p = f32[2 parameter(0)\n}", "test.hlo");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(m.error().where().file, "test.hlo");
  EXPECT_EQ(m.error().where().line, 3);
  EXPECT_EQ(m.error().where().column, 13);
  EXPECT_TRUE(m.error().message.starts_with("expected ',' or ']'")) << "the place is apart: " << m.error().message;
  EXPECT_TRUE(m.error().ToString().starts_with("test.hlo:3:13: expected ',' or ']'")) << m.error();
}

TEST(ModuleParseTest, HugeSplatConstantIsRejectedWithoutAllocating) {
  std::string message =
      ModuleError("HloModule m\nENTRY e {\n  ROOT c = f32[4294967296,4294967296] constant(0)\n}");
  EXPECT_TRUE(message.starts_with("test.hlo:3:")) << message;
  EXPECT_NE(message.find("too large"), std::string::npos) << message;
}

TEST(ModuleParseTest, PrintInstruction) {
  auto m = ModuleOrDie(kSmallModule);
  ASSERT_NE(m, nullptr);
  const Computation& main = *m->entry();
  EXPECT_EQ(PrintInstruction(*FindInstruction(main, "r")),
            "  %r = f32[] reduce(%c, %zero), dimensions={0}, to_apply=%add");
  EXPECT_EQ(PrintInstruction(*main.root()),
            "  ROOT %out = f32[2] broadcast(%r), dimensions={}");
  EXPECT_EQ(PrintInstruction(*FindInstruction(main, "zero")), "  %zero = f32[] constant(0)");
}

}  // namespace
}  // namespace kiln::hlo::parser_testing
