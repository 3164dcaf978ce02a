// "Did you mean ...?" for the command line: when CLI11 refuses the
// arguments, names the subcommand or option a mistyped word most likely
// meant (base/edit_distance.h: ClosestWord), so `kiln fingerprnt` and
// `kiln compile --chipp` say what to type instead of only "not expected".
//
// Reads the parsed app after a failed parse; pure otherwise.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace kiln::tools {

// One line per hint (each ending in '\n'), or "" when there is none:
// an unknown subcommand in argv[1], or unknown --options of the
// subcommand given.
std::string UsageHints(const CLI::App& app, int argc, const char* const* argv);

}  // namespace kiln::tools
