// kiln run FILE [--inputs F.safetensors | --input-literals F.txt |
//   --random-inputs SEED] [--outputs OUT.safetensors] [--print-literals]
//   [--json] [--step-budget N]: evaluate the module on the host and print
// its outputs.
#include <cstdio>

#include "tools/commands.h"
#include "tools/run_command.h"
#include "tools/run_output.h"

namespace kiln::tools {

void RegisterRun(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("run", "Evaluate an HLO module on host inputs; print its outputs");
  auto options = std::make_shared<RunOptions>();
  auto seed = std::make_shared<uint64_t>(0);
  cmd->add_option("file", options->module_path, "HLO text file")->required();
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
  cmd->add_option("--outputs", options->outputs_path,
                  "write the outputs to this safetensors file (tensors \"0\", \"1\", ...)");
  cmd->add_flag("--print-literals", options->print_literals, "print each output as an HLO literal");
  cmd->add_flag("--json", options->json, "print one JSON object");
  cmd->add_option("--step-budget", options->step_budget, "units of work before evaluation gives up")
      ->check(CLI::PositiveNumber);
  cmd->callback([options, seed, random, exit_code] {
    RunOptions run = *options;
    if (random->count() > 0) run.random_seed = *seed;
    auto report = RunModule(run);
    if (!report) {
      std::fprintf(stderr, "kiln run: %s\n", report.error().message.c_str());
      *exit_code = 1;
      return;
    }
    std::string text = run.json ? FormatRunJson(*report, run.print_literals)
                                : FormatRunText(*report, run.print_literals);
    std::fwrite(text.data(), 1, text.size(), stdout);
  });
}

}  // namespace kiln::tools
