// kiln parse FILE... [--json | --print-hlo]: parse, verify and print the
// canonical HLO text (of StableHLO as converted: --print-hlo says so);
// with --json, one array with a summary object per file instead
// ({"file", "module", "computations", "instructions", "parameters",
// "result"} or {"file", "error"}).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "compiler/hlo/printer.h"
#include "tools/commands.h"
#include "tools/json_error.h"
#include "tools/load_module.h"

namespace kiln::tools {
namespace {

nlohmann::json ModuleSummary(const std::string& path, const hlo::Module& module) {
  int64_t instructions = 0;
  for (const auto& computation : module.computations()) instructions += computation->instruction_count();
  nlohmann::json parameters = nlohmann::json::array();
  for (const hlo::Instruction* parameter : module.entry()->parameters()) {
    parameters.push_back(parameter->shape().ToString());
  }
  return {{"file", path},
          {"module", module.name()},
          {"computations", module.computations().size()},
          {"instructions", instructions},
          {"parameters", std::move(parameters)},
          {"result", module.entry()->root()->shape().ToString()}};
}

}  // namespace

void RegisterParse(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("parse", "Parse and verify modules (HLO or StableHLO); print the canonical HLO text");
  struct Args {
    std::vector<std::string> files;
    bool json = false;
    bool print_hlo = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("files", args->files, "HLO text, StableHLO text or MLIR bytecode files")->required();
  auto* print_hlo = cmd->add_flag("--print-hlo", args->print_hlo,
                                  "Print the module as HLO text (the default; StableHLO is printed as "
                                  "converted, with the key of its source)");
  cmd->add_flag("--json", args->json, "Print one JSON array with a summary of each file instead of the text")
      ->excludes(print_hlo);
  cmd->callback([args, exit_code] {
    nlohmann::json out = nlohmann::json::array();
    for (const std::string& path : args->files) {
      auto module = LoadVerifiedModule(path);
      if (!module) {
        std::fprintf(stderr, "kiln parse: %s\n", module.error().ToString().c_str());
        *exit_code = 1;
        if (args->json) out.push_back({{"file", path}, {"error", ErrorJson(module.error())}});
        continue;
      }
      if (args->json) {
        out.push_back(ModuleSummary(path, **module));
        continue;
      }
      std::string text = hlo::PrintModule(**module);
      std::fwrite(text.data(), 1, text.size(), stdout);
    }
    if (args->json) std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  });
}

}  // namespace kiln::tools
