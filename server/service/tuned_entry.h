// Storing what the autotuner accepted: the tuned executable under the key of
// the heuristic compile it started from, in one tenant's namespace.
//
// TunedPut builds the store's PutRequest (plan kind tuned, the server's
// entry notes, device_seconds = the tuned program's measured time, so a
// compile hit answers `estimated_us` = tuned_us). StoreTunedEntry swaps it
// in with CacheStore::ReplaceWithTuned (one transaction: readers see the
// old bytes or the new, never a miss) when the stored entry's checksum is
// still `expected_checksum`; without an expected checksum it puts the entry
// when none is stored and swaps it in over the one stored otherwise.
// Errors are the store's (ReplaceWithTuned names them: not_found,
// entry_changed, already_tuned, kFull, kReadOnly). Thread-safe as the store
// is; borrows its arguments for the call.
//
// `source_text` is the module text the tuning started from (the request's
// HLO, or the text stored beside the entry): it goes with the tuned entry,
// so a store or a server that gets the entry elsewhere (the shared tier, a
// bundle) can explain a miss against it and tune it again by key. Empty:
// the entry goes without (a swap keeps the text already stored).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cache/cache_store.h"
#include "compiler/autotune/tuner.h"
#include "compiler/driver/compile_options.h"

namespace kiln::service {

// `options` as normalized for the compile (driver::NormalizedOptions). The
// request borrows result.tuned_executable's bytes and `source_text`.
cache::PutRequest TunedPut(const std::string& tenant, const autotune::TuneResult& result,
                           const driver::CompileOptions& options, std::string_view source_text = {});

Status StoreTunedEntry(cache::CacheStore& store, const std::string& tenant, const autotune::TuneResult& result,
                       const driver::CompileOptions& options, std::optional<uint64_t> expected_checksum,
                       std::string_view source_text = {});

}  // namespace kiln::service
