#include "compiler/autotune/same_dataflow.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "runtime/format/program.h"

namespace kiln::autotune {
namespace {

using runtime::BufferKind;
using runtime::Program;
using runtime::ProgramBuffer;
using runtime::ProgramKernel;

ProgramBuffer Param(int32_t number, uint64_t offset) {
  return {BufferKind::kParameter, "f32[4]", 16, offset, number, {}, ""};
}
ProgramBuffer Temp(uint64_t offset, uint64_t size = 16) { return {BufferKind::kTemp, "f32[4]", size, offset, -1, {}, ""}; }
ProgramBuffer Out(uint64_t offset) { return {BufferKind::kOutput, "f32[4]", 16, offset, -1, {}, ""}; }
ProgramBuffer Constant(uint64_t offset, std::string literal) {
  return {BufferKind::kConstant, "f32[4]", 16, offset, -1, {}, std::move(literal)};
}

// A kernel module of `arity` f32[4] parameters whose root applies `opcode`.
std::string ElementwiseHlo(const std::string& opcode, int arity) {
  std::string text = "HloModule k\n\nENTRY %e {\n";
  std::string operands;
  for (int i = 0; i < arity; ++i) {
    text += "  %p" + std::to_string(i) + " = f32[4]{0} parameter(" + std::to_string(i) + ")\n";
    operands += (i > 0 ? ", %p" : "%p") + std::to_string(i);
  }
  return text + "  ROOT %r = f32[4]{0} " + opcode + "(" + operands + ")\n}\n";
}

// An all-reduce kernel over `groups` (so that two of them differ).
std::string AllReduceHlo(const std::string& groups) {
  return "HloModule k\n\n%add (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n"
         "  %y = f32[] parameter(1)\n  ROOT %s = f32[] add(%x, %y)\n}\n\nENTRY %e {\n"
         "  %p0 = f32[4]{0} parameter(0)\n  ROOT %all-reduce.1 = f32[4]{0} all-reduce(%p0), replica_groups=" +
         groups + ", to_apply=%add\n}\n";
}

ProgramKernel Kernel(std::string name, std::string hlo, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs) {
  ProgramKernel k;
  k.name = std::move(name);
  k.kind = "loop";
  k.hlo = std::move(hlo);
  k.inputs = std::move(inputs);
  k.outputs = std::move(outputs);
  return k;
}

Program Skeleton() {
  Program p;
  p.key = "00112233445566778899aabbccddeeff";
  p.chip = "v5e";
  p.plan = "heuristic";
  p.options = "{}";
  p.result_shape = "f32[4]";
  return p;
}

// a = exp(p0), b = negate(p1), c = a + b; the result is c.
Program Diamond() {
  Program p = Skeleton();
  p.buffers = {Param(0, 0), Param(1, 16), Temp(32), Temp(48), Out(64)};
  p.kernels = {Kernel("fusion.a", ElementwiseHlo("exponential", 1), {0}, {2}),
               Kernel("fusion.b", ElementwiseHlo("negate", 1), {1}, {3}),
               Kernel("fusion.c", ElementwiseHlo("add", 2), {2, 3}, {4})};
  p.parameters = {0, 1};
  p.results = {4};
  return p;
}

// a = exp(p0), c = tanh(a), b = negate(p1), d = c + b. b reuses a's memory
// (partly: bytes [40, 48) of a's [32, 48)) once c has read a.
Program Reuse() {
  Program p = Skeleton();
  p.buffers = {Param(0, 0), Param(1, 16), Temp(32), Temp(56), Temp(40), Out(80)};
  p.kernels = {Kernel("fusion.a", ElementwiseHlo("exponential", 1), {0}, {2}),
               Kernel("fusion.c", ElementwiseHlo("tanh", 1), {2}, {3}),
               Kernel("fusion.b", ElementwiseHlo("negate", 1), {1}, {4}),
               Kernel("fusion.d", ElementwiseHlo("add", 2), {3, 4}, {5})};
  p.parameters = {0, 1};
  p.results = {5};
  return p;
}

std::vector<uint8_t> Bytes(const Program& p) {
  Result<std::vector<uint8_t>> bytes = runtime::SerializeProgram(p);
  EXPECT_TRUE(bytes) << bytes.error().ToString();
  if (!bytes) return {};
  Result<Program> back = runtime::ParseProgram(*bytes);  // the test programs are valid executables
  EXPECT_TRUE(back) << back.error().ToString();
  return *std::move(bytes);
}

Status Verdict(const Result<DataflowCheck>& check) {
  if (!check) return check.error();
  return Ok();
}

Status Check(const Program& reference, const Program& candidate) {
  return Verdict(SameDataflow(Bytes(reference), Bytes(candidate)));
}

// The error of `s`, which must be a difference mentioning every one of
// `parts`.
void ExpectDiffers(const Status& s, const std::vector<std::string>& parts) {
  ASSERT_FALSE(s) << "accepted";
  EXPECT_EQ(s.error().code, ErrorCode::kFailedPrecondition) << s.error().ToString();
  EXPECT_NE(s.error().message.find("the candidate computes something else than the reference: "), std::string::npos)
      << s.error().message;
  for (const std::string& part : parts) {
    EXPECT_NE(s.error().message.find(part), std::string::npos) << "no '" << part << "' in: " << s.error().message;
  }
}

TEST(SameDataflowTest, TheSameProgramPasses) {
  for (const Program& p : {Diamond(), Reuse()}) {
    Status s = Check(p, p);
    EXPECT_TRUE(s) << s.error().ToString();
  }
}

TEST(SameDataflowTest, TilingAndEstimatesMayDiffer) {
  Program candidate = Diamond();
  candidate.plan = "tuned";
  candidate.kernels[0].tiling.grid = {4};
  candidate.kernels[1].estimated_seconds = 3e-6;
  Status s = Check(Diamond(), candidate);
  EXPECT_TRUE(s) << s.error().ToString();
}

TEST(SameDataflowTest, SwappedIndependentKernelsWithRenumberedBuffersPass) {
  // b before a; the buffers in another order at other offsets.
  Program candidate = Skeleton();
  candidate.buffers = {Param(1, 100), Out(0), Temp(16), Param(0, 200), Temp(32)};
  candidate.kernels = {Kernel("fusion.b", ElementwiseHlo("negate", 1), {0}, {2}),
                       Kernel("fusion.a", ElementwiseHlo("exponential", 1), {3}, {4}),
                       Kernel("fusion.c", ElementwiseHlo("add", 2), {4, 2}, {1})};
  candidate.parameters = {3, 0};
  candidate.results = {1};
  Status s = Check(Diamond(), candidate);
  EXPECT_TRUE(s) << s.error().ToString();
}

TEST(SameDataflowTest, RescheduleWithItsOwnBufferAssignmentPasses) {
  // Reuse() with b moved before c: b must then get memory of its own.
  Program candidate = Reuse();
  std::swap(candidate.kernels[1], candidate.kernels[2]);
  candidate.buffers[4].offset = 96;
  Status s = Check(Reuse(), candidate);
  EXPECT_TRUE(s) << s.error().ToString();
}

TEST(SameDataflowTest, ReadingMemoryAnotherKernelOverwroteFails) {
  // b moved before c with the old assignment: b overwrites bytes of a that c
  // still reads.
  Program candidate = Reuse();
  std::swap(candidate.kernels[1], candidate.kernels[2]);
  ExpectDiffers(Check(Reuse(), candidate),
                {"kernel 2 (fusion.c) reads buffer 2 [32, 48) after kernel 1 (fusion.b) overwrote its memory (buffer 4 [40, 56))"});
}

TEST(SameDataflowTest, OverwrittenResultFails) {
  // Parameters and constants have memory of their own: offsets count in
  // their own areas, so a temporary at a parameter's offset meets nothing.
  Program own_areas = Reuse();
  own_areas.buffers[2].offset = 8;  // a: [8, 24), where p1 is [16, 32) in the parameters' area
  own_areas.buffers[4].offset = 96;
  Status separate = Check(Reuse(), own_areas);
  EXPECT_TRUE(separate) << separate.error().ToString();

  // An extra kernel at the end overwrites the result; the reference runs it
  // before d, with memory of its own.
  Program reference = Reuse();
  reference.buffers.push_back(Temp(120, 8));
  reference.kernels.insert(reference.kernels.begin() + 3,
                           Kernel("fusion.e", ElementwiseHlo("sqrt", 1), {0}, {6}));
  Program candidate = reference;
  std::swap(candidate.kernels[3], candidate.kernels[4]);
  candidate.buffers[6].offset = 84;  // inside d's [80, 96)
  ExpectDiffers(Check(reference, candidate),
                {"result array 0 reads buffer 5 [80, 96) after kernel 4 (fusion.e) overwrote its memory"});
}

// An in-place result placed at no offset of its own (0) seems to overwrite
// what lies there: the reference's offsets do not describe its memory, so
// values are compared buffer by buffer, and the check says so.
TEST(SameDataflowTest, OffsetsThatDoNotDescribeTheReferenceAreNotUsed) {
  Program reference = Reuse();
  reference.buffers[3].offset = 32;  // c placed over a
  reference.kernels[3].inputs = {2, 4};  // d reads a, which c's write seems to overwrite
  Result<DataflowCheck> same = SameDataflow(Bytes(reference), Bytes(reference));
  ASSERT_TRUE(same) << same.error().ToString();
  EXPECT_FALSE(same->memory_checked);
  EXPECT_NE(same->memory_note.find("kernel 3 (fusion.d) reads buffer 2"), std::string::npos) << same->memory_note;
  // Values are still compared: d reading c instead of a differs.
  Program candidate = reference;
  candidate.kernels[3].inputs = {3, 4};
  ExpectDiffers(Check(reference, candidate), {"kernel 3 (fusion.d) reads output 0 of kernel fusion.c as input 0"});
  // A reference whose offsets hold is checked with them.
  Result<DataflowCheck> placed = SameDataflow(Bytes(Reuse()), Bytes(Reuse()));
  ASSERT_TRUE(placed) << placed.error().ToString();
  EXPECT_TRUE(placed->memory_checked);
}

TEST(SameDataflowTest, ZeroSizeBuffersOverlapNothing) {
  Program reference = Reuse();
  reference.buffers.push_back(Temp(32, 0));  // at a's offset, empty
  reference.kernels.insert(reference.kernels.begin() + 1,
                           Kernel("fusion.empty", ElementwiseHlo("sqrt", 1), {0}, {6}));
  Status s = Check(reference, reference);
  EXPECT_TRUE(s) << s.error().ToString();
}

TEST(SameDataflowTest, ReadingAnotherProducersValueFails) {
  Program candidate = Diamond();
  candidate.kernels[2].inputs = {3, 2};  // c = b + a
  ExpectDiffers(Check(Diamond(), candidate),
                {"kernel 2 (fusion.c) reads output 0 of kernel fusion.b as input 0",
                 "the reference's kernel reads output 0 of kernel fusion.a"});

  Program parameter = Diamond();
  parameter.kernels[0].inputs = {1};  // a = exp(p1)
  ExpectDiffers(Check(Diamond(), parameter),
                {"kernel 0 (fusion.a) reads parameter 1 as input 0", "reads parameter 0"});
}

TEST(SameDataflowTest, ConstantsCompareByLiteral) {
  Program reference = Diamond();
  reference.buffers.push_back(Constant(120, "{1, 2, 3, 4}"));
  reference.kernels[0].inputs = {5};
  Program renumbered = reference;
  renumbered.buffers[5].offset = 240;
  Status s = Check(reference, renumbered);
  EXPECT_TRUE(s) << s.error().ToString();
  Program other = reference;
  other.buffers[5].literal = "{1, 2, 3, 5}";
  ExpectDiffers(Check(reference, other), {"kernel 0 (fusion.a) reads constant f32[4] {1, 2, 3, 5}"});
}

TEST(SameDataflowTest, OtherResultFails) {
  Program candidate = Diamond();
  candidate.results = {2};
  ExpectDiffers(Check(Diamond(), candidate),
                {"result array 0 is output 0 of kernel fusion.a, the reference's output 0 of kernel fusion.c"});
}

TEST(SameDataflowTest, OtherParametersFail) {
  Program candidate = Diamond();
  std::swap(candidate.buffers[0].parameter_number, candidate.buffers[1].parameter_number);
  ExpectDiffers(Check(Diamond(), candidate), {"parameter array 0 is parameter 1"});
  Program shape = Diamond();
  shape.result_shape = "f32[8]";
  ExpectDiffers(Check(Diamond(), shape), {"result shape"});
}

// a and b are all-reduces over different groups; neither reads the other.
Program TwoCollectives(bool swapped) {
  Program p = Diamond();
  p.kernels[0] = Kernel("all-reduce.a", AllReduceHlo("{{0,1}}"), {0}, {2});
  p.kernels[1] = Kernel("all-reduce.b", AllReduceHlo("{{0},{1}}"), {1}, {3});
  if (swapped) std::swap(p.kernels[0], p.kernels[1]);
  return p;
}

TEST(SameDataflowTest, SwappedCollectivesFail) {
  ExpectDiffers(Check(TwoCollectives(false), TwoCollectives(true)),
                {"kernel 1 (all-reduce.a) (all-reduce) runs after kernel 0 (all-reduce.b)", "ordered effects"});
  // Their -start/-done forms, send/recv and rng count as well.
  for (const std::string opcode : {"all-reduce-start", "all-gather-done", "send", "rng-bit-generator"}) {
    Program reference = Diamond();
    reference.kernels[0].hlo = ElementwiseHlo(opcode, 1);
    reference.kernels[1].hlo = ElementwiseHlo(opcode, 1) + "\n";
    Program candidate = reference;
    std::swap(candidate.kernels[0], candidate.kernels[1]);
    ExpectDiffers(Check(reference, candidate), {"(" + opcode + ") runs after"});
  }
}

// A custom-call is ordered only when marked as having a side effect (as
// the compiler's schedule keeps it).
TEST(SameDataflowTest, OnlyCustomCallsWithSideEffectsKeepTheirOrder) {
  for (const bool marked : {false, true}) {
    Program reference = Diamond();
    const std::string attribute = marked ? ", custom_call_has_side_effect=true" : "";
    for (int k = 0; k < 2; ++k) {
      reference.kernels[k].hlo = "HloModule k\n\nENTRY %e {\n  %p0 = f32[4]{0} parameter(0)\n  ROOT %r = f32[4]{0} "
                                 "custom-call(%p0), custom_call_target=\"t" +
                                 std::to_string(k) + "\"" + attribute + "\n}\n";
    }
    Program candidate = reference;
    std::swap(candidate.kernels[0], candidate.kernels[1]);
    Status s = Check(reference, candidate);
    if (marked) {
      ExpectDiffers(s, {"(custom-call) runs after"});
    } else {
      EXPECT_TRUE(s) << s.error().ToString();
    }
  }
}

TEST(SameDataflowTest, CollectivesMayMovePastOtherKernels) {
  // One collective and one elementwise kernel swapped: fine.
  Program reference = TwoCollectives(false);
  reference.kernels[1] = Kernel("fusion.b", ElementwiseHlo("negate", 1), {1}, {3});
  Program candidate = reference;
  std::swap(candidate.kernels[0], candidate.kernels[1]);
  Status s = Check(reference, candidate);
  EXPECT_TRUE(s) << s.error().ToString();
}

TEST(SameDataflowTest, CollectiveNamesAndMetadataAreNotOpcodes) {
  // Instructions named like collectives, metadata naming one, a computation
  // named like one: none is an ordered op, so the swap passes.
  const std::string named =
      "HloModule k\n\nENTRY %e {\n  %all-reduce.3 = f32[4]{0} parameter(0)\n"
      "  ROOT %all-gather = f32[4]{0} negate(%all-reduce.3), metadata={op_name=\"jit(f)/all-reduce(x)\"}\n}\n";
  const std::string tuple =
      "HloModule k\n\nENTRY %e {\n  %p0 = f32[4]{0} parameter(0)\n"
      "  ROOT %t = (f32[4]{0}, f32[4]{0:T(8,128)}) tuple(%p0, %p0), to_apply=%send(\n}\n";
  Program reference = Diamond();
  reference.kernels[0].hlo = named;
  reference.kernels[1].hlo = tuple;
  Program candidate = reference;
  std::swap(candidate.kernels[0], candidate.kernels[1]);
  Status s = Check(reference, candidate);
  EXPECT_TRUE(s) << s.error().ToString();
}

TEST(SameDataflowTest, DifferentKernelsFail) {
  Program other_hlo = Diamond();
  other_hlo.kernels[1].hlo = ElementwiseHlo("abs", 1);
  ExpectDiffers(Check(Diamond(), other_hlo), {"kernel 1 (fusion.b) has other HLO than the reference's fusion.b"});

  Program renamed = Diamond();
  renamed.kernels[1].name = "fusion.z";
  ExpectDiffers(Check(Diamond(), renamed), {"kernel 1 (fusion.z) is not among the reference's kernels"});

  // The reference computes an extra value nobody reads; the candidate lacks it.
  Program reference = Diamond();
  reference.buffers.push_back(Temp(96));
  reference.kernels.push_back(Kernel("fusion.e", ElementwiseHlo("sqrt", 1), {0}, {5}));
  ExpectDiffers(Check(reference, Diamond()), {"it lacks the reference's kernel 3 (fusion.e)"});

  // A repeated kernel runs once more.
  Program twice = reference;
  twice.kernels[3] = twice.kernels[0];
  twice.kernels[3].outputs = {5};
  ExpectDiffers(Check(reference, twice), {"kernel 3 (fusion.a) runs more often than the reference's 1"});
}

TEST(SameDataflowTest, RepeatedNamesMatchInOrder) {
  // Two kernels of one name and HLO (a = exp(p0), then exp(p1)); swapping
  // them swaps what each reads, which the check refuses.
  Program reference = Diamond();
  reference.kernels[1] = Kernel("fusion.a", ElementwiseHlo("exponential", 1), {1}, {3});
  Status same = Check(reference, reference);
  EXPECT_TRUE(same) << same.error().ToString();
  Program candidate = reference;
  std::swap(candidate.kernels[0], candidate.kernels[1]);
  ExpectDiffers(Check(reference, candidate), {"kernel 0 (fusion.a) reads parameter 1 as input 0"});
}

TEST(SameDataflowTest, GarbageBytesAreErrors) {
  const std::vector<uint8_t> good = Bytes(Diamond());
  std::mt19937 random(7);
  std::vector<std::vector<uint8_t>> bad = {{}, {0}, std::vector<uint8_t>(good.begin(), good.begin() + good.size() / 2)};
  for (int i = 0; i < 20; ++i) {
    std::vector<uint8_t> noise(1 + random() % 512);
    for (uint8_t& byte : noise) byte = static_cast<uint8_t>(random());
    bad.push_back(noise);
    std::vector<uint8_t> flipped = good;
    flipped[random() % flipped.size()] ^= static_cast<uint8_t>(1 + random() % 255);
    bad.push_back(flipped);
  }
  for (const std::vector<uint8_t>& bytes : bad) {
    Status as_candidate = Verdict(SameDataflow(good, bytes));
    EXPECT_FALSE(as_candidate);
    if (!as_candidate) {
      EXPECT_NE(as_candidate.error().code, ErrorCode::kFailedPrecondition) << as_candidate.error();
    }
    EXPECT_FALSE(Verdict(SameDataflow(bytes, good)));
  }
  Status s = Verdict(SameDataflow(good, good));
  EXPECT_TRUE(s) << s.error().ToString();
}

TEST(SameDataflowTest, TensOfThousandsOfKernelsRunFast) {
  // n independent kernels read p0 into buffers that reuse two slots of
  // memory in turn; each result is copied to an output by the next kernel.
  // The candidate runs the pairs in reverse order with its buffers in
  // reverse order too.
  constexpr int kPairs = 20000;
  auto make = [](bool reversed) {
    Program p = Skeleton();
    p.buffers = {Param(0, 0)};
    std::vector<ProgramKernel> pairs;
    p.result_shape = "(f32[4] x " + std::to_string(kPairs) + ")";
    for (int i = 0; i < kPairs; ++i) {
      const int slot = reversed ? kPairs - 1 - i : i;
      const uint32_t temp = static_cast<uint32_t>(p.buffers.size());
      p.buffers.push_back(Temp(16 + 16 * (slot % 2)));
      p.buffers.push_back(Out(48 + 16 * static_cast<uint64_t>(reversed ? kPairs - 1 - slot : slot)));
      const int k = reversed ? kPairs - 1 - i : i;
      p.kernels.push_back(Kernel("fusion.x" + std::to_string(k), ElementwiseHlo("exponential", 1), {0}, {temp}));
      p.kernels.push_back(Kernel("copy.x" + std::to_string(k), ElementwiseHlo("copy", 1), {temp}, {temp + 1}));
    }
    p.parameters = {0};
    p.results.resize(kPairs);
    for (int i = 0; i < kPairs; ++i) {
      const int position = reversed ? kPairs - 1 - i : i;  // kernel pair of result i
      p.results[i] = static_cast<uint32_t>(2 + 2 * position);
    }
    return p;
  };
  const std::vector<uint8_t> reference = Bytes(make(false));
  const std::vector<uint8_t> candidate = Bytes(make(true));
  const auto start = std::chrono::steady_clock::now();
  Status s = Verdict(SameDataflow(reference, candidate));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(s) << s.error().ToString();
  EXPECT_LT(seconds, 5.0);
  // Swapping two results is noticed.
  Program swapped = make(true);
  std::swap(swapped.results[0], swapped.results[1]);
  ExpectDiffers(Verdict(SameDataflow(reference, Bytes(swapped))), {"result array 0 is output 0 of kernel copy.x1"});
}

}  // namespace
}  // namespace kiln::autotune
