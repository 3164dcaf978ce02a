// StoreTarget: `kiln prewarm --db`. Compiles on this machine and stores
// each entry in the cache store exactly as a server compile of the same
// body stores it (server/service/compiled_entry.h: key, notes, plan, components
// and the request-body mapping, tenant default), so a server on the same
// store answers the module as a hit, from the fast path too. With a tune
// budget, each new entry is then autotuned and the tuned executable
// swapped in as `kiln tune --db` does.
//
// Every entry is one SQLite transaction: killed at any moment, the store
// holds whole entries only and a rerun stores the rest. Borrows the store;
// thread-safe (the store is; each call compiles its own module).
#pragma once

#include <optional>

#include "cache/cache_store.h"
#include "compiler/autotune/tuner.h"
#include "tools/prewarm_target.h"
#include "tools/tune_report.h"

namespace kiln::tools {

class StoreTarget final : public PrewarmTarget {
 public:
  StoreTarget(cache::CacheStore& store, std::optional<autotune::TuneOptions> tune)
      : store_(store), tune_(std::move(tune)) {}

  Result<bool> Contains(const CompileJob& job) override;
  Result<JobOutcome> Make(const CompileJob& job) override;

 private:
  cache::EntryId IdOf(const CompileJob& job) const;
  // Autotunes the entry just stored; says what happened.
  StoreOutcome Tune(const CompileJob& job);

  cache::CacheStore& store_;
  std::optional<autotune::TuneOptions> tune_;
};

}  // namespace kiln::tools
