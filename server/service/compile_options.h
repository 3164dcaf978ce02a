// Compile options as a request states them: a chip by name, a plan, a
// scoped VMEM size, a topology, checked and put in canonical form, and the
// request hash that names a raw body (the hit path's memory of bodies seen
// before). Errors are 400 unknown_chip or invalid_options, naming the
// field and what is accepted. Pure; thread-safe.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cache/entry.h"
#include "compiler/driver/compile_options.h"
#include "compiler/hlo/fingerprint.h"

namespace kiln::service {

// Sets options.chip to the canonical name of `chip`; unknown chips name the
// known ones.
Result<void> SetChip(driver::CompileOptions& options, std::string_view chip);
// Sets options.plan from "none", "heuristic" or "given".
Result<void> SetPlan(driver::CompileOptions& options, std::string_view plan);
// Applies a JSON options object ({"plan", "scoped_vmem_bytes", "topology"}).
Result<void> ApplyJsonOptions(driver::CompileOptions& options, const nlohmann::json& object);
// Refuses a scoped_vmem_bytes larger than the chip's VMEM.
Result<void> CheckScopedVmem(const driver::CompileOptions& options);
// Checks options.topology against the chip and puts it in canonical form
// ("2x4"; a one-chip topology becomes none).
Result<void> CheckTopology(driver::CompileOptions& options);

// The request hash of a text `body` compiled with `options` for `tenant`
// (XXH3-128 over the body, the chip, the canonical options, the tenant and,
// when given, the canonical argument shapes that refine it): what the
// server's compile route computes, for tools that store entries the
// server's fast path should find (kiln prewarm).
hlo::Hash128 HashCompileRequestBody(std::string_view body, const driver::CompileOptions& options,
                                    std::string_view tenant, std::string_view argument_shapes = {});

// The options a stored entry was compiled with (its notes), normalized, to
// tune it again: plan heuristic. An entry compiled with another plan (none,
// given) is refused: tuning starts from the heuristic plan.
Result<driver::CompileOptions> OptionsOfEntry(const cache::EntryMetadata& metadata);

}  // namespace kiln::service
