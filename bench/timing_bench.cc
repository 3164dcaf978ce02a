// kiln_timing_bench [repetitions]: host time the timing model spends per
// kernel, next to the evaluator's numerics for the same small programs, in
// the same process. "cold" is SimulateProgram from scratch (work analysis,
// block search, grid); "warm" is a ProgramTimer's answer for a kernel it
// priced at Create. Prints microseconds per kernel and the ratio numerics /
// timing. Never fails on timing; exits non-zero only on errors.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "compiler/hlo/literal.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/program/loaded_program.h"
#include "runtime/timing/test_programs.h"
#include "runtime/timing/timing_simulator.h"

namespace {

using kiln::runtime::LoadedProgram;
using kiln::runtime::timing::testing::DotProgram;
using kiln::runtime::timing::testing::ProgramBuilder;

double MicrosPerCall(int reps, const std::function<bool()>& call) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) {
    if (!call()) return -1;
  }
  std::chrono::duration<double, std::micro> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / reps;
}

std::unique_ptr<LoadedProgram> Eltwise(const std::string& dims) {
  ProgramBuilder b;
  std::string shape = "f32[" + dims + "]";
  uint32_t x = b.Parameter(shape), a = b.Parameter("f32[]");
  std::string hlo = "HloModule k\nENTRY e {\n  x = " + shape + " parameter(0)\n  a = f32[] parameter(1)\n"
                    "  ab = " + shape + " broadcast(a), dimensions={}\n  m = " + shape +
                    " multiply(x, ab)\n  z = f32[] constant(0)\n  zb = " + shape +
                    " broadcast(z), dimensions={}\n  ROOT r = " + shape + " maximum(m, zb)\n}\n";
  uint32_t r = b.Kernel("relu", "loop", hlo, {x, a}, {shape})[0];
  auto loaded = b.Load(r);
  return loaded ? std::move(*loaded) : nullptr;
}

std::unique_ptr<LoadedProgram> Reduce(const std::string& dims, const std::string& out) {
  ProgramBuilder b;
  std::string shape = "f32[" + dims + "]";
  uint32_t x = b.Parameter(shape);
  std::string hlo = "HloModule k\nadd {\n  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n"
                    "  ROOT s = f32[] add(p, q)\n}\nENTRY e {\n  x = " + shape +
                    " parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[" + out +
                    "] reduce(x, z), dimensions={1}, to_apply=add\n}\n";
  uint32_t r = b.Kernel("reduce", "input", hlo, {x}, {"f32[" + out + "]"})[0];
  auto loaded = b.Load(r);
  return loaded ? std::move(*loaded) : nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  const kiln::runtime::ChipSpec& chip = *kiln::runtime::FindChip("v5e");
  struct Case {
    std::string name;
    std::unique_ptr<LoadedProgram> program;
  };
  std::vector<Case> cases;
  auto dot = [](const std::string& s) {
    auto p = DotProgram(s, s, s);
    return p ? std::move(*p) : nullptr;
  };
  cases.push_back({"dot f32[128,128]^2", dot("f32[128,128]")});
  cases.push_back({"dot f32[512,512]^2", dot("f32[512,512]")});
  cases.push_back({"relu f32[512,512]", Eltwise("512,512")});
  cases.push_back({"relu f32[2048,2048]", Eltwise("2048,2048")});
  cases.push_back({"reduce f32[1024,1024]", Reduce("1024,1024", "1024")});

  std::printf("%-24s %14s %14s %14s %12s %12s\n", "program (1 kernel)", "numerics us", "timing cold us",
              "timing warm us", "num/cold", "device us");
  for (Case& c : cases) {
    if (c.program == nullptr) {
      std::fprintf(stderr, "%s: could not build the program\n", c.name.c_str());
      return 1;
    }
    std::vector<kiln::hlo::Literal> args;
    for (uint32_t b : c.program->program().parameters) args.emplace_back(c.program->buffer_shape(b));
    double device_us = 0;
    double cold = MicrosPerCall(reps, [&] {
      auto p = kiln::runtime::timing::SimulateProgram(*c.program, chip);
      if (p) device_us = p->seconds * 1e6;
      return p.has_value();
    });
    auto timer = kiln::runtime::timing::ProgramTimer::Create(*c.program, chip);
    if (!timer) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), timer.error().ToString().c_str());
      return 1;
    }
    double warm = MicrosPerCall(reps * 100, [&] { return (*timer)->TimeKernel(0).has_value(); });
    std::string error;
    double numerics = MicrosPerCall(std::max(1, reps / 4), [&] {
      auto out = kiln::runtime::ExecuteProgram(*c.program, args);
      if (!out) error = out.error().ToString();
      return out.has_value();
    });
    if (cold < 0 || warm < 0 || numerics < 0) {
      std::fprintf(stderr, "%s: failed: %s\n", c.name.c_str(), error.c_str());
      return 1;
    }
    std::printf("%-24s %14.1f %14.1f %14.2f %11.0fx %12.2f\n", c.name.c_str(), numerics, cold, warm,
                numerics / cold, device_us);
  }
  return 0;
}
