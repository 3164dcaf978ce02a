// The slice a module is compiled for when the caller names none.
//
// A program traced for several devices (num_partitions, replica_count, or
// the devices its shardings, replica groups and source-target pairs name)
// runs on that many chips: compiled for one chip, its collectives would be
// timed as local copies and its HBM checked against the sum of the chips.
// So every front door (kiln compile, run, fingerprint, tune, prewarm and
// POST /v1/compile) resolves the topology right after parsing, before the
// fingerprint, and the key, the executable and the answers all carry it.
// Pure function over the module; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "compiler/driver/compile_options.h"
#include "compiler/hlo/module.h"

namespace kiln::driver {

// How the topology was settled, for the command line and the API to say.
enum class TopologySource { kOneChip, kGiven, kModule };

struct ResolvedTopology {
  TopologySource source = TopologySource::kOneChip;
  int64_t devices = 1;  // the module's own device count
};

// The reason of a module that does not fit the topology asked for (422).
inline constexpr std::string_view kTopologyMismatch = "topology_mismatch";

// Sets options.topology: the caller's (canonical form; a one-chip topology
// becomes none) when it matches the module, else the most compact slice of
// options.chip holding the module's devices when there are more than one,
// else none. Errors (invalid_argument): an unknown chip or malformed
// topology; reason topology_mismatch for a module of N devices on a slice
// of M != N chips (a one-device module may run on any slice, replicated);
// no slice of the chip holds the module's devices.
Result<ResolvedTopology> ResolveTopology(const hlo::Module& module, CompileOptions& options);

// "2x4 (the module's 8 devices)", "2x4 (given)" or "one chip", for output.
std::string DescribeTopology(const CompileOptions& options, const ResolvedTopology& resolved);

}  // namespace kiln::driver
