// kiln fingerprint [--chip C] FILE...: one "<32 hex digits>  <file>" line per
// file, as sha256sum prints.
#include <cstdio>

#include "compiler/hlo/fingerprint.h"
#include "tools/commands.h"
#include "tools/load_module.h"

namespace kiln::tools {

void RegisterFingerprint(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("fingerprint", "Print the cache key of HLO text files");
  struct Args {
    std::vector<std::string> files;
    std::string chip = kDefaultChip;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--chip", args->chip, "Target chip (v4, v5e, v5p, v6e, tpu7x)")
      ->check(CLI::IsMember({"v4", "v5e", "v5p", "v6e", "tpu7x"}, CLI::ignore_case));
  cmd->add_option("files", args->files, "HLO text files")->required();
  cmd->callback([args, exit_code] {
    hlo::FingerprintOptions options;
    options.chip = args->chip;
    for (char& c : options.chip) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const std::string& path : args->files) {
      auto module = LoadVerifiedModule(path);
      if (!module) {
        std::fprintf(stderr, "kiln fingerprint: %s\n", module.error().message.c_str());
        *exit_code = 1;
        continue;
      }
      auto fp = hlo::FingerprintModule(**module, options);
      if (!fp) {
        std::fprintf(stderr, "kiln fingerprint: %s: %s\n", path.c_str(), fp.error().message.c_str());
        *exit_code = 1;
        continue;
      }
      std::printf("%s  %s\n", fp->key.Hex().c_str(), path.c_str());
    }
  });
}

}  // namespace kiln::tools
