// kiln inspect explain FILE: would FILE hit the store, and if not, what
// differs from the nearest entry (server/service/miss_explainer.h, the same answer
// as POST /v1/explain), as a readable report or, with --json, that answer.
#pragma once

#include <string>

#include "base/status.h"
#include "cache/cache_store.h"

namespace kiln::tools {

struct ExplainArgs {
  std::string file;
  std::string tenant;  // empty: every tenant's entries (the closest is reported, with its tenant)
  std::string chip;
  std::string plan;
  bool json = false;
};

Status ExplainFile(cache::CacheStore& store, const ExplainArgs& args);

}  // namespace kiln::tools
