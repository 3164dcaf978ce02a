// How the command-line tools find and open a cache store: --db, else the
// KILN_DB environment variable, else ./kiln.db (the same default as
// `kiln serve`). Tools that only look into a store never create one, so a
// mistyped path fails instead of showing an empty cache.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "base/status.h"
#include "cache/cache_store.h"

namespace kiln::tools {

// Adds --db storing into `*db`, which stays empty when not given.
CLI::Option* AddDbOption(CLI::App* cmd, std::string* db, const std::string& help);

// `given` when not empty, else $KILN_DB when set and not empty, else
// cache::kDefaultStorePath. (Read when a command runs, not by CLI11: subcommands
// that share one --db variable would each apply the variable.)
std::string ResolveDbPath(const std::string& given);

enum class StoreAccess { kLookOnly, kCreateIfMissing };

// Opens the store at ResolveDbPath(db) for a tool (no dictionary training). kLookOnly
// fails with NotFound for a missing file and InvalidArgument for a file
// that is not a kiln store; the error names the path.
Result<std::unique_ptr<cache::CacheStore>> OpenToolStore(const std::string& db, StoreAccess access);

}  // namespace kiln::tools
