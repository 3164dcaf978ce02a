// The entry a compile stores: what `POST /v1/compile` puts in the cache
// store for a module it compiled, and the one write of it (StoreCompile),
// shared with `kiln prewarm --db` so that an entry made offline is byte for
// byte the entry a server compile makes (same key, notes, plan, components,
// source text and request-body mapping) and a server on the same store
// answers it as a hit.
//
// Pure functions over values but StoreCompile (the store's); thread-safe.
// A returned PutRequest views `executable` and `notes_text`: the caller
// keeps both alive until the Put.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cache/cache_store.h"
#include "cache/entry.h"
#include "compiler/driver/compile_module.h"
#include "server/service/entry_json.h"

namespace kiln::service {

// The notes stored beside the entry: normalized options, kernels, shapes.
EntryNotes NotesOfCompile(const driver::CompileOutput& compiled, const driver::CompileOptions& options);

// The put for `compiled` under `id`. `request_hash` (HashCompileRequestBody)
// maps the raw request body to the key for the server's fast path.
cache::PutRequest PutOfCompile(const cache::EntryId& id, const driver::CompileOutput& compiled,
                               const driver::CompileOptions& options, std::string_view executable,
                               std::string_view notes_text, std::optional<hlo::Hash128> request_hash);

// The compile-log record of `module` (as sent, before its compile's passes
// change it) stored under `id` by `client` with `options` (its structure
// and canonical options included); compile seconds are left 0.
cache::CompileRecord CompileRecordOf(const hlo::Module& module, const cache::EntryId& id, std::string client,
                                     const driver::CompileOptions& options);

// What storing a compile did.
struct StoredCompile {
  std::shared_ptr<const std::string> executable;  // the compiled bytes, shared
  EntryNotes notes;
  int64_t created_ms = 0;  // by the store's clock
  // The store's answer: ok, or why the entry was not kept (StorageProblemOf
  // tells a full disk and a read-only store from other failures).
  Status stored = Ok();
  double store_ms = 0;
  bool recompiled = false;  // the compile log had other keys for the name (same program)
};

// Puts the entry of `compiled` (the compile of `source_text` with
// `options`) under `id`, with `request_hash` mapping the raw request to it.
// When it is stored, logs `record` (CompileRecordOf the module as sent),
// its compile seconds filled in: diagnostics, a failure to log is ignored.
// With `shared_copy`, fills in the shared tier's copy of the entry.
StoredCompile StoreCompile(cache::CacheStore& store, const cache::EntryId& id, const driver::CompileOutput& compiled,
                           const driver::CompileOptions& options, std::string_view source_text,
                           std::optional<hlo::Hash128> request_hash, cache::CompileRecord record,
                           cache::BundleEntry* shared_copy = nullptr);

// The shared tier's copy of an entry written by `put` at `created_ms`: its
// metadata, components, bytes and (when not too long) its source text, so
// explain works on every server of the fleet.
cache::BundleEntry SharedEntryOf(const cache::PutRequest& put, int64_t created_ms);

}  // namespace kiln::service
