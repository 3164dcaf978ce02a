// kiln fingerprint [--chip C] [--plan P] [--json] FILE...: one
// "<32 hex digits>  <file>" line per file, as sha256sum prints, or one JSON
// array of {"file", "key", "chip", "plan"} (or {"file", "error"}). The key
// is the one `kiln compile` and the server use for the same chip and
// options.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "compiler/driver/compile_module.h"
#include "compiler/driver/module_topology.h"
#include "compiler/hlo/fingerprint.h"
#include "runtime/chip/chip_spec.h"
#include "tools/commands.h"
#include "tools/json_error.h"
#include "tools/load_module.h"

namespace kiln::tools {

void RegisterFingerprint(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("fingerprint", "Print the cache key of HLO text files");
  struct Args {
    std::vector<std::string> files;
    std::string chip = kDefaultChip;
    std::string plan = "heuristic";
    std::string topology;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--chip", args->chip, "Target chip (" + runtime::ChipNamesText() + ")")
      ->check(CLI::IsMember(runtime::ChipNames(), CLI::ignore_case));
  cmd->add_option("--plan", args->plan, "Fusion plan the key is for: none, heuristic or given")
      ->check(CLI::IsMember({"none", "heuristic", "given"}));
  cmd->add_option("--topology", args->topology,
                  "The slice the key is for (default: the module's own device count on its most compact slice)");
  cmd->add_option("files", args->files, "HLO text files")->required();
  cmd->add_flag("--json", args->json, "Print one JSON array, an object per file");
  cmd->callback([args, exit_code] {
    nlohmann::json out = nlohmann::json::array();
    for (const std::string& path : args->files) {
      driver::CompileOptions compile_options;
      compile_options.chip = args->chip;
      compile_options.plan = *driver::ParsePlanKind(args->plan);  // checked by CLI11
      compile_options.topology = args->topology;
      auto fp = [&]() -> Result<hlo::Fingerprint> {
        KILN_ASSIGN_OR_RETURN(auto module, LoadVerifiedModule(path));
        // The same topology a compile of the module resolves, so the same key.
        Result<driver::ResolvedTopology> resolved = driver::ResolveTopology(*module, compile_options);
        if (!resolved) return resolved.error().WithContext(path);
        auto fingerprint = hlo::FingerprintModule(*module, driver::FingerprintOptionsFor(compile_options));
        if (!fingerprint) return fingerprint.error().WithContext(path);
        return fingerprint;
      }();
      if (!fp) {
        std::fprintf(stderr, "kiln fingerprint: %s\n", fp.error().ToString().c_str());
        *exit_code = 1;
        if (args->json) out.push_back({{"file", path}, {"error", ErrorJson(fp.error())}});
        continue;
      }
      if (args->json) {
        out.push_back({{"file", path},
                       {"key", fp->key.Hex()},
                       {"chip", compile_options.chip},
                       {"plan", args->plan},
                       {"topology", compile_options.topology.empty() ? nlohmann::json(nullptr)
                                                                     : nlohmann::json(compile_options.topology)}});
      } else {
        std::printf("%s  %s\n", fp->key.Hex().c_str(), path.c_str());
      }
    }
    if (args->json) std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  });
}

}  // namespace kiln::tools
