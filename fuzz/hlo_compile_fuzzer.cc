// libFuzzer harness: what POST /v1/compile does with HLO that verifies, and
// what an execute then does with the result. The module is compiled
// (passes, fusion planning, tiling, buffer assignment, cost model,
// lowering) for a chip and plan chosen by the input's length; the
// executable the compiler wrote must load as the execute route loads it
// (kernels printed as HLO and parsed back, buffer table checked, timing
// model); when its run fits in 64 MiB it runs on random inputs under a
// small step budget, as the execute route runs it.
//
// Compile errors are answers, not findings; an executable of kiln's own
// that does not load is (reported with __builtin_trap), as is any crash,
// sanitizer report, leak or hang.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "compiler/driver/compile_module.h"
#include "fuzz/fuzz_check.h"
#include "runtime/io/random_inputs.h"
#include "runtime/timing/timed_execution.h"
#include "server/service/program_cache.h"

namespace {

constexpr kiln::fusion::PlanKind kPlans[] = {kiln::fusion::PlanKind::kHeuristic, kiln::fusion::PlanKind::kNone,
                                             kiln::fusion::PlanKind::kGiven};
constexpr uint64_t kMaxRunHostBytes = 64 << 20;
constexpr int64_t kStepBudget = int64_t{1} << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = hlo::ParseModule(text, "fuzz.hlo");
  if (!module || !hlo::VerifyModule(**module)) return 0;

  driver::CompileOptions options;
  options.plan = kPlans[size % 3];
  const std::span<const runtime::ChipSpec> chips = runtime::AllChips();
  options.chip = std::string(chips[(size / 3) % chips.size()].name);
  options.verify_passes = true;
  auto compiled = driver::CompileModule(**module, options);
  if (!compiled) return 0;

  auto ready = service::LoadReadyProgram(compiled->executable);
  if (!ready) fuzz::FailCheck("the compiler's executable does not load", ready.error().message);
  if ((*ready)->run_host_bytes > kMaxRunHostBytes) return 0;
  auto args = runtime::io::RandomArguments((*ready)->parameter_shapes, size);
  if (!args) return 0;
  runtime::EvalOptions eval;
  eval.step_budget = kStepBudget;
  (void)runtime::timing::ExecuteTimed(*(*ready)->program, *(*ready)->timer, *args, eval);
  return 0;
}
