// The plain data the cache store keeps and returns. Values; copyable;
// thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/version.h"
#include "compiler/hlo/fingerprint.h"
#include "runtime/format/plan_kind.h"

namespace kiln::cache {

using hlo::Hash128;

// Parses Hash128::Hex() output (32 hex digits, either case).
Result<Hash128> ParseHash128(std::string_view hex);

// What identifies one cached executable. An entry is only ever served for
// exactly this tenant (a namespace: a tenant's own, or the shared one),
// chip and compiler format version.
struct EntryId {
  std::string tenant;
  Hash128 key;
  std::string chip;
  uint32_t format_version = kCompilerFormatVersion;

  bool operator==(const EntryId&) const = default;
  std::string ToString() const;  // "tenant/key/chip/vN", for messages
};

// The rule every tenant (namespace) name and chip name follows, wherever
// it comes from (an auth file, a request, a bundle, the shared tier): 1 to
// 128 letters, digits, '-', '_' or '.'. Refusals name the field and quote
// the value (cut to 64 bytes, control characters escaped).
Status ValidateName(std::string_view field, std::string_view name);

struct EntryIdHash {
  size_t operator()(const EntryId& id) const;
};

// How the executable's fusion/tiling plan was chosen: the compiler's and
// the executable's kinds (runtime/format/plan_kind.h), stored by name.
using runtime::ParsePlanKind;
using runtime::PlanKind;
using runtime::PlanKindName;

// One named sub-hash of a key ("parameter 2", "entry body"), see
// components.h.
struct KeyComponent {
  std::string name;
  Hash128 hash;
  bool operator==(const KeyComponent&) const = default;
};

// Everything stored about an entry except its executable bytes.
struct EntryMetadata {
  int64_t row_id = 0;  // SQLite rowid; stable while the entry exists
  EntryId id;
  std::string options;
  PlanKind plan_kind = PlanKind::kHeuristic;
  uint64_t raw_bytes = 0;
  uint64_t stored_bytes = 0;  // compressed
  uint64_t checksum = 0;      // XXH3-64 of the raw executable
  uint32_t dictionary_id = 0;
  double compile_seconds = 0;  // the compile a hit saves (for a tuned entry, the one it was tuned from)
  double device_seconds = 0;
  double tune_seconds = 0;     // tuning runs that made it (0 for a plain compile)
  int64_t created_ms = 0;   // Unix time
  int64_t last_hit_ms = 0;  // Unix time; created_ms until the first hit
  int64_t hit_count = 0;
  bool quarantined = false;
};

// An executable to store.
struct PutRequest {
  EntryId id;
  std::string options;
  PlanKind plan_kind = PlanKind::kHeuristic;
  std::string_view executable;  // raw bytes; copied (compressed) by Put
  double compile_seconds = 0;
  double device_seconds = 0;
  // The tuning run's time (tuned entries); ReplaceWithTuned keeps the
  // replaced entry's compile_seconds.
  double tune_seconds = 0;
  std::vector<KeyComponent> components = {};              // for explaining misses
  std::optional<Hash128> request_hash = std::nullopt;   // raw request body -> key map
  // The HLO text compiled, kept (compressed) for explaining later misses;
  // empty: keep what the entry had. Texts over kMaxSourceBytes are not kept.
  std::string_view source_text = {};
};

inline constexpr size_t kMaxSourceBytes = size_t{64} << 20;

// Figures read from outside the store (a bundle, the shared tier) are
// checked before they are written: seconds finite, at least 0 and at most
// kMaxRecordedSeconds; times between 2000-01-01 and a day past `now_ms`.
// The error names the field and its value.
inline constexpr double kMaxRecordedSeconds = 365.0 * 24 * 3600;
Status ValidateSeconds(std::string_view field, double seconds);
Status ValidateUnixMs(std::string_view field, int64_t unix_ms, int64_t now_ms);

// A measured tuning trial: one candidate plan for one kernel's subgraph on
// a chip. Records are scoped like entries: a record belongs to one tenant
// (namespace) and is never returned to another, and it is reused only by
// the compiler format version that measured it.
struct TuningRecord {
  int64_t id = 0;            // set by the store
  std::string tenant;        // the namespace that owns it
  std::string workload_key;  // Hash128::Hex() of FingerprintSubgraph (compiler/hlo/subgraph_fingerprint.h)
  std::string chip;
  // The compiler that measured it; 0 for records from before the store kept
  // it (never reused).
  uint32_t compiler_version = kCompilerFormatVersion;
  std::string plan;                                       // opaque to the store
  std::optional<double> measured_seconds = std::nullopt;  // absent when the trial failed
  std::optional<std::string> error = std::nullopt;        // why the trial failed
  int64_t created_ms = 0;                                 // set by the store when 0
};

}  // namespace kiln::cache
