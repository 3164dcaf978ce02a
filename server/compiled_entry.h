// The entry a compile stores: what `POST /v1/compile` puts in the cache
// store for a module it compiled, shared with `kiln prewarm` so that an
// entry made offline is byte for byte the entry a server compile makes
// (same key, notes, plan, components and request-body mapping) and a server
// on the same store answers it as a hit.
//
// Pure functions over values; thread-safe. The returned PutRequest views
// `executable` and `notes_text`: the caller keeps both alive until the Put.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cache/cache_store.h"
#include "cache/entry.h"
#include "compiler/driver/compile_module.h"
#include "server/entry_json.h"

namespace kiln::server {

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

}  // namespace kiln::server
