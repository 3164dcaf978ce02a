// kiln run FILE [--inputs F.safetensors | --input-literals F.txt |
//   --random-inputs SEED] [--outputs OUT.safetensors] [--print-literals]
//   [--json] [--step-budget N] [--chip C] [--plan none|heuristic|given]
//   [--scoped-vmem B] [--dot-tiles BM,BN,BK] [--topology AxB[xC]] [--trace F.json]
//   [--timing-only | --direct] [--arg-shapes S,...]
// Compiles the module (FILE may also be a kiln executable), runs the
// executable on host inputs and prints its outputs, device time and kernel
// profile. --direct evaluates the module as written instead. A StableHLO
// check that fails (check.expect_close, ...) fails the command, naming it.
// Dynamic dimensions are refined from --arg-shapes or the inputs' shapes
// (module_refinement.h).
#include <cstdio>

#include "runtime/chip/chip_spec.h"
#include "tools/commands.h"
#include "tools/json_error.h"
#include "tools/run_command.h"
#include "tools/run_output.h"

namespace kiln::tools {

void RegisterRun(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "run", "Compile an HLO module and run it on a simulated chip; print outputs and device time");
  auto options = std::make_shared<RunOptions>();
  auto seed = std::make_shared<uint64_t>(0);
  cmd->add_option("file", options->module_path, "HLO text file or kiln executable")->required();
  auto* inputs =
      cmd->add_option("--inputs", options->inputs_path,
                      "safetensors file with tensors \"0\", \"1\", ... for the parameters");
  auto* literals = cmd->add_option("--input-literals", options->input_literals_path,
                                   "file of `param.N = <HLO literal>` lines");
  auto* random =
      cmd->add_option("--random-inputs", *seed,
                      "random parameters from this seed (floats in [-1,1), ints in [0,4))");
  inputs->excludes(literals)->excludes(random);
  literals->excludes(random);
  auto* outputs = cmd->add_option(
      "--outputs", options->outputs_path,
      "write the outputs to this safetensors file (tensors \"0\", \"1\", ...)");
  auto* print = cmd->add_flag("--print-literals", options->print_literals,
                              "print each output as an HLO literal");
  cmd->add_flag("--json", options->json, "print one JSON object");
  auto top = std::make_shared<int64_t>(0);
  cmd->add_option("--top", *top, "print only the N kernels that take the most time (0: all; the JSON has all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--step-budget", options->step_budget, "units of work before evaluation gives up")
      ->check(CLI::PositiveNumber);

  auto* chip = cmd->add_option("--chip", options->chip,
                               "simulated chip (" + runtime::ChipNamesText() +
                                   "; default v5e, or an executable's own)")
                   ->check(CLI::IsMember(runtime::ChipNames(), CLI::ignore_case));
  auto* plan = cmd->add_option("--plan", options->plan,
                               "fusion plan to compile with: none, heuristic (default) or given")
                   ->check(CLI::IsMember({"none", "heuristic", "given"}));
  auto* vmem = cmd->add_option("--scoped-vmem", options->scoped_vmem_bytes,
                               "scoped VMEM per kernel in bytes (default: the chip's)")
                   ->check(CLI::NonNegativeNumber);
  auto* tiles = cmd->add_option("--dot-tiles", options->dot_tiles,
                                "force the block shape BM,BN,BK of every dot kernel (timing)");
  auto* topology = cmd->add_option("--topology", options->topology,
                                   "run on a slice of chips (\"2x4\", \"2x2x1\"; default one chip): one copy "
                                   "per chip, collectives timed over its ICI");
  cmd->add_option("--arg-shapes", options->arg_shapes,
                  "concrete shapes of the entry's parameters (\"s64[],f32[3,4]\"), refining a module's "
                  "dynamic dimensions; by default the inputs' shapes");
  auto* trace = cmd->add_option("--trace", options->trace_path,
                                "write the kernel timeline as a Chrome trace (opens in Perfetto)");
  auto* timing_only = cmd->add_flag("--timing-only", options->timing_only,
                                    "simulate the device time without computing values");
  auto* direct = cmd->add_flag("--direct", options->direct,
                               "evaluate the module as written: no compile, no device time");
  for (CLI::Option* value_flag : {inputs, literals, random, outputs, print}) {
    timing_only->excludes(value_flag);
  }
  for (CLI::Option* compile_flag : {chip, plan, vmem, tiles, topology, trace, timing_only}) {
    direct->excludes(compile_flag);
  }

  cmd->callback([options, seed, random, exit_code, top] {
    RunOptions run = *options;
    if (random->count() > 0) run.random_seed = *seed;
    auto report = RunModule(run);
    if (!report) {
      ReportFailure("run", report.error(), run.json);
      *exit_code = 1;
      return;
    }
    std::string text = run.json ? FormatRunJson(*report, run.print_literals)
                                : FormatRunText(*report, run.print_literals, static_cast<size_t>(*top));
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (report->checks && report->checks->failed > 0) {
      for (const runtime::CheckOutcome& f : report->checks->failures) {
        std::fprintf(stderr, "kiln run: check failed: %s\n", CheckText(f).c_str());
      }
      std::fprintf(stderr, "kiln run: %lld of %lld checks failed\n", static_cast<long long>(report->checks->failed),
                   static_cast<long long>(report->checks->failed + report->checks->passed));
      *exit_code = 1;
    }
    if (!run.trace_path.empty() && !report->profile) {
      std::fprintf(stderr, "kiln run: no trace written to %s: device time unavailable: %s\n",
                   run.trace_path.c_str(), report->timing_error.c_str());
      *exit_code = 1;
    }
  });
}

}  // namespace kiln::tools
