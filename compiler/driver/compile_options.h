// CompileOptions: what one compile of a module is asked for (plan, chip,
// scoped VMEM, passes), and their canonical forms: the text the
// fingerprint hashes and the JSON executables and API answers carry.
// Plain values and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "compiler/fusion/fusion_plan.h"
#include "compiler/hlo/fingerprint.h"

namespace kiln::driver {

struct CompileOptions {
  fusion::PlanKind plan = fusion::PlanKind::kHeuristic;
  std::string chip = "v5e";
  // Scoped VMEM per kernel; 0 takes the chip's default (16 MiB).
  int64_t scoped_vmem_bytes = 0;
  // The slice the program runs on, one copy per chip, in ParseTopology's
  // canonical form ("2x4"); empty: one chip. Part of the key: a per-device
  // program for 8 chips is not the one for 4.
  std::string topology;
  bool run_passes = true;
  // Verify after every pass (on in test builds).
#ifdef NDEBUG
  bool verify_passes = false;
#else
  bool verify_passes = true;
#endif
};

// "none", "heuristic", "given" (case-sensitive).
Result<fusion::PlanKind> ParsePlanKind(std::string_view name);

// The options in the canonical text the fingerprint hashes ("plan=heuristic"
// plus any non-default setting, sorted by name).
std::string CanonicalOptionsText(const CompileOptions& options);
// The same options as a JSON object, for executables and API answers.
std::string OptionsJson(const CompileOptions& options);

// The fingerprint options for compiling with `options`.
hlo::FingerprintOptions FingerprintOptionsFor(const CompileOptions& options);

// `options` with the chip name lowercased, as keys and executables carry it.
CompileOptions NormalizedOptions(const CompileOptions& options);

// `topology` checked against `chip` (runtime::ParseTopology) and put in the
// canonical form keys carry (Topology::ToString); "" for one chip, which
// is no slice: the same key as no topology.
// Fails naming what is wrong with the topology or the chip.
Result<std::string> CanonicalTopology(std::string_view topology, std::string_view chip);

}  // namespace kiln::driver
