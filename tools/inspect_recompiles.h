// kiln inspect recompiles: module names compiled as several programs and
// what changed between them (server/service/recompile_report.h, the same answer as
// GET /v1/recompiles), as a table or, with --json, that answer.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "cache/cache_store.h"

namespace kiln::tools {

struct RecompilesArgs {
  std::optional<std::string> tenant;  // every tenant when absent
  std::optional<std::string> name;
  int min_keys = 2;
  bool json = false;
};

Status PrintRecompiles(cache::CacheStore& store, const RecompilesArgs& args);

}  // namespace kiln::tools
