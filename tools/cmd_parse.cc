// kiln parse FILE...: parse, verify and print the canonical text.
#include <cstdio>

#include "compiler/hlo/printer.h"
#include "tools/commands.h"
#include "tools/load_module.h"

namespace kiln::tools {

void RegisterParse(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("parse", "Parse and verify HLO text files; print the canonical text");
  auto files = std::make_shared<std::vector<std::string>>();
  cmd->add_option("files", *files, "HLO text files")->required()->check(CLI::ExistingFile);
  cmd->callback([files, exit_code] {
    for (const std::string& path : *files) {
      auto module = LoadVerifiedModule(path);
      if (!module) {
        std::fprintf(stderr, "kiln parse: %s\n", module.error().ToString().c_str());
        *exit_code = 1;
        continue;
      }
      std::string text = hlo::PrintModule(**module);
      std::fwrite(text.data(), 1, text.size(), stdout);
    }
  });
}

}  // namespace kiln::tools
