// kiln fingerprint [--chip C] [--plan P] FILE...: one "<32 hex digits>  <file>"
// line per file, as sha256sum prints. The key is the one `kiln compile` and
// the server use for the same chip and options.
#include <cstdio>

#include "compiler/hlo/fingerprint.h"
#include "compiler/driver/compile_module.h"
#include "tools/commands.h"
#include "tools/load_module.h"

namespace kiln::tools {

void RegisterFingerprint(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("fingerprint", "Print the cache key of HLO text files");
  struct Args {
    std::vector<std::string> files;
    std::string chip = kDefaultChip;
    std::string plan = "heuristic";
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--chip", args->chip, "Target chip (v4, v5e, v5p, v6e, tpu7x)")
      ->check(CLI::IsMember({"v4", "v5e", "v5p", "v6e", "tpu7x"}, CLI::ignore_case));
  cmd->add_option("--plan", args->plan, "Fusion plan the key is for: none, heuristic or given")
      ->check(CLI::IsMember({"none", "heuristic", "given"}));
  cmd->add_option("files", args->files, "HLO text files")->required();
  cmd->callback([args, exit_code] {
    driver::CompileOptions compile_options;
    compile_options.chip = args->chip;
    compile_options.plan = *driver::ParsePlanKind(args->plan);  // checked by CLI11
    const hlo::FingerprintOptions options = driver::FingerprintOptionsFor(compile_options);
    for (const std::string& path : args->files) {
      auto module = LoadVerifiedModule(path);
      if (!module) {
        std::fprintf(stderr, "kiln fingerprint: %s\n", module.error().ToString().c_str());
        *exit_code = 1;
        continue;
      }
      auto fp = hlo::FingerprintModule(**module, options);
      if (!fp) {
        std::fprintf(stderr, "kiln fingerprint: %s: %s\n", path.c_str(), fp.error().ToString().c_str());
        *exit_code = 1;
        continue;
      }
      std::printf("%s  %s\n", fp->key.Hex().c_str(), path.c_str());
    }
  });
}

}  // namespace kiln::tools
