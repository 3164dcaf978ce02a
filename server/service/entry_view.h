// EntryView: what a compile, a fetch or an index answers about one stored
// entry, without reading its row again. Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cache/entry.h"
#include "compiler/hlo/fingerprint.h"

namespace kiln::service {

// Bytes shared between the store's hot set, the index and every answer
// that sends them (the HTTP transport's Bytes is the same type).
using SharedBytes = std::shared_ptr<const std::string>;

// What a compile or GET answers about an entry.
struct EntryView {
  cache::EntryId id;
  std::string plan;
  std::string options_json;  // {"plan", "scoped_vmem_bytes"}
  double entry_compile_ms = 0;
  int64_t kernels = 0;
  double estimated_us = 0;
  int64_t created_ms = 0;
  SharedBytes executable;  // shared, never copied per request; null when unknown
};

// The view of a stored entry's metadata (without its bytes).
EntryView ViewOfMetadata(const cache::EntryMetadata& metadata);

// 32 lowercase hex digits -> the key; nullopt for anything else.
std::optional<hlo::Hash128> ParseKeyHex(std::string_view text);

}  // namespace kiln::service
