// Subcommands of the `kiln` binary. Each Register* adds its subcommand to
// the CLI11 app; the callback runs the command and sets the exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace kiln::tools {

void RegisterParse(CLI::App& app, int* exit_code);
void RegisterFingerprint(CLI::App& app, int* exit_code);
void RegisterRun(CLI::App& app, int* exit_code);
void RegisterCompile(CLI::App& app, int* exit_code);
void RegisterTune(CLI::App& app, int* exit_code);
void RegisterServe(CLI::App& app, int* exit_code);
void RegisterInspect(CLI::App& app, int* exit_code);
void RegisterPrewarm(CLI::App& app, int* exit_code);

// The chip `kiln serve` targets when none is named.
inline constexpr const char* kDefaultChip = "v5e";

}  // namespace kiln::tools
