// ExecuteTimed and ControlFlowRecorder: the evaluator reports each while
// loop's trips and each conditional's branch, and the kernels are priced
// with what the run did.
#include "runtime/timing/timed_execution.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/hlo/parser.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/timing/test_programs.h"

namespace kiln::runtime::timing {
namespace {

// Counts to parameter 0 with a 256x256 matmul per trip; returns the count.
constexpr const char* kCountingKernel = R"(HloModule count
cond {
  p = (s32[], s32[], f32[256,256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], s32[], f32[256,256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  x = f32[256,256] get-tuple-element(p), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[256,256] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s32[], s32[], f32[256,256]) tuple(j, n, y)
}
ENTRY e {
  n = s32[] parameter(0)
  c = f32[] constant(0)
  x = f32[256,256] broadcast(c), dimensions={}
  zero = s32[] constant(0)
  init = (s32[], s32[], f32[256,256]) tuple(zero, n, x)
  w = (s32[], s32[], f32[256,256]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=0
}
)";

// The counting loop sits in the true branch; the false branch returns -1.
constexpr const char* kBranchKernel = R"(HloModule branch
cond {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(j, n)
}
loop {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, n)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=0
}
skip {
  n = s32[] parameter(0)
  ROOT m = s32[] constant(-1)
}
ENTRY e {
  p = pred[] parameter(0)
  n = s32[] parameter(1)
  ROOT c = s32[] conditional(p, n, n), true_computation=loop, false_computation=skip
}
)";

std::unique_ptr<LoadedProgram> OneKernelProgram(const char* hlo, std::vector<std::string> params) {
  testing::ProgramBuilder b;
  std::vector<uint32_t> inputs;
  for (const std::string& shape : params) inputs.push_back(b.Parameter(shape));
  uint32_t out = b.Kernel("k", "control", hlo, inputs, {"s32[]"})[0];
  auto loaded = b.Load(out);
  EXPECT_TRUE(loaded) << loaded.error().message;
  return loaded ? std::move(*loaded) : nullptr;
}

hlo::Literal Scalar(const std::string& text) {
  auto literal = hlo::ParseLiteral(text);
  EXPECT_TRUE(literal) << literal.error().message;
  return literal ? std::move(*literal) : hlo::Literal();
}

const hlo::Instruction* Find(const hlo::Module& module, hlo::Opcode opcode) {
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->opcode() == opcode) return instr.get();
    }
  }
  return nullptr;
}

TEST(ControlFlowRecorderTest, CountsTripsAndBranches) {
  auto program = OneKernelProgram(kBranchKernel, {"pred[]", "s32[]"});
  ASSERT_NE(program, nullptr);
  const hlo::Module& module = program->kernel_module(0);
  ControlFlowRecorder recorder(module);
  const hlo::Instruction* loop = Find(module, hlo::Opcode::kWhile);
  const hlo::Instruction* branch = Find(module, hlo::Opcode::kConditional);
  ASSERT_NE(loop, nullptr);
  ASSERT_NE(branch, nullptr);
  // Seeded before any run: a loop that never runs costs nothing.
  EXPECT_EQ(recorder.counts().while_iterations.at(loop), 0);
  EXPECT_EQ(recorder.counts().branch_runs.at(branch), (std::vector<int64_t>{0, 0}));

  std::vector<hlo::Literal> args;
  args.push_back(Scalar("pred[] true"));
  args.push_back(Scalar("s32[] 6"));
  auto result = EvaluateModule(module, args, {.control_flow = &recorder});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->ToString(), "s32[] 6");
  EXPECT_EQ(recorder.counts().while_iterations.at(loop), 6);
  EXPECT_EQ(recorder.counts().branch_runs.at(branch), (std::vector<int64_t>{1, 0}));
}

TEST(TimedExecutionTest, ObservedTripsDriveTheKernelTime) {
  auto program = OneKernelProgram(kCountingKernel, {"s32[]"});
  ASSERT_NE(program, nullptr);
  auto timer = ProgramTimer::Create(*program, *FindChip("v5e"));
  ASSERT_TRUE(timer) << timer.error().message;
  auto run = [&](int trips) {
    std::vector<hlo::Literal> args;
    args.push_back(Scalar("s32[] " + std::to_string(trips)));
    auto timed = ExecuteTimed(*program, **timer, args);
    EXPECT_TRUE(timed) << timed.error().message;
    EXPECT_EQ(timed->result.ToString(), "s32[] " + std::to_string(trips));
    EXPECT_TRUE(timed->profile) << timed->profile.error().message;
    return timed->profile->seconds;
  };
  double three = run(3);
  double thirty = run(30);
  EXPECT_GT(three, 0);
  EXPECT_GT(thirty, 5 * three);

  // Without values the same loop cannot be timed.
  auto static_profile = SimulateProgram(*program, *FindChip("v5e"));
  ASSERT_FALSE(static_profile);
  EXPECT_NE(static_profile.error().message.find("depends on data"), std::string::npos);
}

TEST(TimedExecutionTest, LoopInABranchNotTakenIsFree) {
  auto program = OneKernelProgram(kBranchKernel, {"pred[]", "s32[]"});
  ASSERT_NE(program, nullptr);
  auto timer = ProgramTimer::Create(*program, *FindChip("v5e"));
  ASSERT_TRUE(timer) << timer.error().message;
  std::vector<hlo::Literal> args;
  args.push_back(Scalar("pred[] false"));
  args.push_back(Scalar("s32[] 1000"));
  auto timed = ExecuteTimed(*program, **timer, args);
  ASSERT_TRUE(timed) << timed.error().message;
  EXPECT_EQ(timed->result.ToString(), "s32[] -1");
  ASSERT_TRUE(timed->profile) << timed->profile.error().message;
  EXPECT_EQ(timed->profile->kernels.size(), 1u);
}

TEST(TimedExecutionTest, ExecutionErrorsAreReturned) {
  auto program = OneKernelProgram(kCountingKernel, {"s32[]"});
  ASSERT_NE(program, nullptr);
  auto timer = ProgramTimer::Create(*program, *FindChip("v5e"));
  ASSERT_TRUE(timer) << timer.error().message;
  std::vector<hlo::Literal> args;
  args.push_back(Scalar("s32[] 1000000"));
  auto timed = ExecuteTimed(*program, **timer, args, {.step_budget = 1000});
  ASSERT_FALSE(timed);
  EXPECT_NE(timed.error().message.find("kernel 0 (k)"), std::string::npos) << timed.error().message;
}

}  // namespace
}  // namespace kiln::runtime::timing
