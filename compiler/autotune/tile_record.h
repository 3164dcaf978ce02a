// How a kernel's tuning record names what was tried: the kernel's workload
// key (its self-contained HLO as lowering writes it, fingerprinted with the
// chip and the compiler format version, so the same subgraph with the same
// shapes has the same key in any module) and a tile's text (its grid and
// blocks, which a candidate list of the same kernel reproduces exactly).
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "compiler/fusion/fusion_plan.h"

namespace kiln::autotune {

// "autotune-kernel/" + 32 hex digits; an error when the HLO does not parse.
Result<std::string> KernelWorkloadKey(std::string_view kernel_hlo, std::string_view chip);

// "tile grid=1x2x2x4 in=256x512,512x256 out=256x256", or "untiled".
std::string TileText(const fusion::TileChoice& tile);

}  // namespace kiln::autotune
