// What the servers of a fleet tell each other through Redis pub/sub, on one
// channel (kFleetChannel):
//   published  an entry was written to the shared tier, with its version:
//              lease waiters look at once, and a server holding an older
//              version of the entry (the heuristic plan of a key another
//              server tuned) fetches the new one;
//   released   a compile lease was let go without a publish (the compile
//              failed or was abandoned): its waiters look at once;
//   failed     a compile failure was marked (SharedTier::PublishFailure).
// A message is a line of tab-separated fields: the kind, the entry's
// tenant, key, chip and format version, and for `published` its version.
// Events are hints: a server that misses one (a dropped subscription)
// still finds the same state in Redis on its next look.
//
// Pure functions on values; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cache/entry.h"

namespace kiln::cache::shared {

inline constexpr std::string_view kFleetChannel = "kiln:events";

// Which of two entries under one key is the newer: a tuned plan over the
// heuristic one, then the later of the same plan. Nothing older replaces
// something newer, in Redis or in a server's store.
struct EntryVersion {
  int rank = 0;  // 0: heuristic plan, 1: tuned
  int64_t created_ms = 0;

  friend bool operator==(const EntryVersion&, const EntryVersion&) = default;
  bool NewerThan(const EntryVersion& other) const {
    return rank != other.rank ? rank > other.rank : created_ms > other.created_ms;
  }
};

EntryVersion VersionOf(const EntryMetadata& metadata);
// "RANK:CREATED_MS", as the shared tier keeps it beside each entry.
std::string FormatVersion(const EntryVersion& version);
std::optional<EntryVersion> ParseVersion(std::string_view text);

enum class FleetEventKind { kPublished, kReleased, kFailed };

struct FleetEvent {
  FleetEventKind kind = FleetEventKind::kPublished;
  EntryId id;
  EntryVersion version;  // kPublished
};

std::string EncodeFleetEvent(const FleetEvent& event);
// nullopt for a message that is not a well-formed event (ignored).
std::optional<FleetEvent> DecodeFleetEvent(std::string_view message);

}  // namespace kiln::cache::shared
