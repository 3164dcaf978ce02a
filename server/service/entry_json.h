// Entries as the API shows them (the Entry and CompileResult schemas), and
// the server's notes stored beside each entry.
//
// The cache store keeps an opaque `options` text per entry. The server
// stores there a JSON object with the normalized compile options and facts
// it needs to answer without loading the executable:
//
//   {"options": {"plan": "heuristic", "scoped_vmem_bytes": 0},
//    "kernels": 3, "parameters": ["f32[2,3]", "f32[2,3]"]}
//
// Notes written by other tools (a bare options object) read with kernels 0
// and no parameter texts. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/entry.h"

namespace kiln::service {

struct EntryNotes {
  nlohmann::json options = nlohmann::json::object();  // {"plan", "scoped_vmem_bytes"}
  int64_t kernels = 0;
  std::vector<std::string> parameters;  // readable shape of each entry parameter
};

std::string SerializeEntryNotes(const EntryNotes& notes);
EntryNotes ParseEntryNotes(std::string_view text);

// "2025-06-01T12:00:00.000Z" for Unix milliseconds.
std::string Rfc3339(int64_t unix_ms);

// The plan the entry was compiled with ("none", "heuristic", "given",
// "tuned"), as the store records it.
std::string EntryPlanName(const cache::EntryMetadata& metadata);

// The Entry schema: what `GET /v1/entries` and `kiln inspect list/show
// --json` print alike.
nlohmann::json EntryToJson(const cache::EntryMetadata& metadata);

}  // namespace kiln::service
