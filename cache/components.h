// The named components of a fingerprint, stored beside each entry so a miss
// can be explained ("parameter 2 differs").
//
// Names: "parameter <i>" for each entry parameter's shape, "entry body",
// "called computation <i>" for each computation reachable from the entry
// (in module order), "module config", "options", "target". Pure functions;
// thread-safe.
#pragma once

#include <string>
#include <vector>

#include "cache/entry.h"
#include "compiler/hlo/fingerprint.h"

namespace kiln::cache {

std::vector<KeyComponent> KeyComponentsOf(const hlo::Fingerprint& fingerprint);

// Names of the components that differ between `query` and `stored`: those
// whose hashes differ, those only in `query`, then those only in `stored`.
// Order follows `query`, then `stored`.
std::vector<std::string> DifferingComponents(const std::vector<KeyComponent>& query,
                                             const std::vector<KeyComponent>& stored);

}  // namespace kiln::cache
