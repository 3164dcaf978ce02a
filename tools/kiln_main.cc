// kiln: compile cache for XLA HLO. One binary, one subcommand per job.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "base/host_cores.h"
#include "base/version.h"
#include "runtime/kernels/isa_level.h"
#include "tools/commands.h"
#include "tools/usage_hints.h"

namespace {

// The deepest command the words on the line name ("kiln inspect" for
// `kiln inspect --db x.db`), for the help a missing subcommand prints.
const CLI::App* DeepestCommand(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  for (int i = 1; i < argc; ++i) {
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == argv[i]) next = sub;
    }
    if (next != nullptr) at = next;
  }
  return at;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "kiln: a compile cache for XLA HLO programs.\n"
      "Fingerprints graph-plus-shape, compiles for simulated TPU chips and caches executables."};
  app.require_subcommand(1);
  // The kernels' ISA level is the one the numerics of `run`, `tune` and the
  // server use in this process (KILN_ISA may lower it); large kernels spread
  // over the host cores no running program holds (KILN_HOST_THREADS).
  const int host_cores = kiln::HostCores::Get().total();
  const std::string version = "kiln " + std::string(kiln::kKilnVersion) + " (compiler format " +
                              std::to_string(kiln::kCompilerFormatVersion) + ", kernels " +
                              std::string(kiln::runtime::IsaLevelName(kiln::runtime::ActiveIsaLevel())) + ", " +
                              std::to_string(host_cores) + (host_cores == 1 ? " host core)" : " host cores)");
  app.set_version_flag("-v,--version", version);
  int exit_code = 0;
  kiln::tools::RegisterParse(app, &exit_code);
  kiln::tools::RegisterFingerprint(app, &exit_code);
  kiln::tools::RegisterRun(app, &exit_code);
  kiln::tools::RegisterCompile(app, &exit_code);
  kiln::tools::RegisterTune(app, &exit_code);
  kiln::tools::RegisterServe(app, &exit_code);
  kiln::tools::RegisterInspect(app, &exit_code);
  kiln::tools::RegisterPrewarm(app, &exit_code);
  // `kiln version` and `kiln help [COMMAND...]`, as people type them.
  app.add_subcommand("version", "Print kiln's version")->callback([&version] { std::printf("%s\n", version.c_str()); });
  auto* help = app.add_subcommand("help", "Print the help of kiln, or of a command: kiln help inspect list");
  auto words = std::make_shared<std::vector<std::string>>();
  help->add_option("command", *words, "The command (and its subcommand)");
  help->callback([&app, words, &exit_code] {
    const CLI::App* at = &app;
    for (const std::string& word : *words) {
      const CLI::App* next = nullptr;
      for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->get_name() == word) next = sub;
      }
      if (next == nullptr) {
        std::fprintf(stderr, "kiln help: no command '%s'%s%s\n", word.c_str(), at == &app ? "" : " under ",
                     at == &app ? "" : at->get_name().c_str());
        exit_code = 2;
        return;
      }
      at = next;
    }
    // App::help() would describe the command being run (help itself).
    std::printf("%s", at->get_formatter()->make_help(at, at->get_name(), CLI::AppFormatMode::Normal).c_str());
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error exits 2, as getopt tools do.
    if (e.get_exit_code() == 0) return app.exit(e);
    // A mistyped command or option: the "did you mean" is the useful part,
    // so it comes first, in place of CLI11's own complaint.
    const std::string hints = kiln::tools::UsageHints(app, argc, argv);
    if (!hints.empty()) {
      std::fprintf(stderr, "kiln: %sRun with --help for more information.\n", hints.c_str());
      return 2;
    }
    // A command that needs a subcommand, given none: what it has.
    const CLI::App* at = DeepestCommand(app, argc, argv);
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && at->get_require_subcommand_min() > 0 &&
        at->get_subcommands([](const CLI::App* sub) { return sub->parsed(); }).empty()) {
      std::fprintf(stderr, "kiln%s%s: which command? %s", at == &app ? "" : " ", at == &app ? "" : at->get_name().c_str(),
                   at->help().c_str());
      return 2;
    }
    app.exit(e);
    return 2;
  }
  return exit_code;
}
