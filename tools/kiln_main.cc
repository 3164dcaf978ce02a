// kiln: compile cache for XLA HLO. One binary, one subcommand per job.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "base/host_cores.h"
#include "base/version.h"
#include "runtime/kernels/isa_level.h"
#include "tools/commands.h"
#include "tools/usage_hints.h"

int main(int argc, char** argv) {
  CLI::App app{
      "kiln: a compile cache for XLA HLO programs.\n"
      "Fingerprints graph-plus-shape, compiles for simulated TPU chips and caches executables."};
  app.require_subcommand(1);
  // The kernels' ISA level is the one the numerics of `run`, `tune` and the
  // server use in this process (KILN_ISA may lower it); large kernels spread
  // over the host cores no running program holds (KILN_HOST_THREADS).
  const int host_cores = kiln::HostCores::Get().total();
  app.set_version_flag("--version", "kiln " + std::string(kiln::kKilnVersion) + " (compiler format " +
                                        std::to_string(kiln::kCompilerFormatVersion) + ", kernels " +
                                        std::string(kiln::runtime::IsaLevelName(
                                            kiln::runtime::ActiveIsaLevel())) +
                                        ", " + std::to_string(host_cores) +
                                        (host_cores == 1 ? " host core)" : " host cores)"));
  int exit_code = 0;
  kiln::tools::RegisterParse(app, &exit_code);
  kiln::tools::RegisterFingerprint(app, &exit_code);
  kiln::tools::RegisterRun(app, &exit_code);
  kiln::tools::RegisterCompile(app, &exit_code);
  kiln::tools::RegisterTune(app, &exit_code);
  kiln::tools::RegisterServe(app, &exit_code);
  kiln::tools::RegisterInspect(app, &exit_code);
  kiln::tools::RegisterPrewarm(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error exits 2, as getopt tools do.
    const int code = app.exit(e);
    if (code == 0) return 0;
    std::fputs(kiln::tools::UsageHints(app, argc, argv).c_str(), stderr);
    return 2;
  }
  return exit_code;
}
