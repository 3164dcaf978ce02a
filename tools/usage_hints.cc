#include "tools/usage_hints.h"

#include <string_view>
#include <vector>

#include "base/edit_distance.h"

namespace kiln::tools {
namespace {

std::string Hint(std::string_view what, std::string_view word, std::string_view closest) {
  return std::string(what) + " '" + std::string(word) + "': did you mean '" + std::string(closest) + "'?\n";
}

// "--name" for each long name of `app`'s options.
std::vector<std::string> LongOptions(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  }
  return names;
}

}  // namespace

std::string UsageHints(const CLI::App& app, int argc, const char* const* argv) {
  if (argc < 2) return "";
  std::vector<std::string> commands;
  const CLI::App* chosen = nullptr;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands.push_back(sub->get_name());
    if (sub->get_name() == argv[1]) chosen = sub;
  }
  const std::string_view first = argv[1];
  if (chosen == nullptr) {
    if (first.starts_with("-")) return "";
    std::optional<std::string_view> closest = ClosestWord(first, commands);
    return closest ? Hint("unknown command", first, *closest) : "";
  }
  std::string hints;
  int first_option = 2;
  std::vector<std::string> nested;
  for (const CLI::App* sub : chosen->get_subcommands([](const CLI::App*) { return true; })) {
    nested.push_back(sub->get_name());
  }
  if (!nested.empty() && argc > 2) {
    const std::string_view second = argv[2];
    const CLI::App* inner = nullptr;
    for (const CLI::App* sub : chosen->get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == second) inner = sub;
    }
    if (inner == nullptr && !second.starts_with("-")) {
      std::optional<std::string_view> closest = ClosestWord(second, nested);
      return closest ? Hint("unknown " + std::string(first) + " command", second, *closest) : "";
    }
    if (inner != nullptr) {
      chosen = inner;
      first_option = 3;
    }
  }
  const std::vector<std::string> options = LongOptions(*chosen);
  for (int i = first_option; i < argc; ++i) {
    std::string_view word = argv[i];
    if (!word.starts_with("--")) continue;
    word = word.substr(0, word.find('='));
    bool known = false;
    for (const std::string& option : options) known |= option == word;
    if (known) continue;
    if (std::optional<std::string_view> closest = ClosestWord(word, options)) {
      hints += Hint("unknown option", word, *closest);
    }
  }
  return hints;
}

}  // namespace kiln::tools
