// How a kernel's tuning record names what was tried: the kernel's workload
// key (the fingerprint of its subgraph, compiler/hlo/subgraph_fingerprint.h,
// so the same subgraph with the same shapes has the same key in any module;
// the record keeps chip and compiler version beside it) and a tile's text
// (its grid and blocks, which a candidate list of the same kernel
// reproduces exactly).
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "compiler/fusion/fusion_plan.h"
#include "compiler/hlo/computation.h"

namespace kiln::autotune {

// 32 hex digits: the subgraph fingerprint of `kernel` (its instructions and
// roots, entry indices of `entry`); an error when the subgraph cannot be
// fingerprinted.
Result<std::string> KernelWorkloadKey(const hlo::Computation& entry, const fusion::Kernel& kernel);

// "tile grid=1x2x2x4 in=256x512,512x256 out=256x256", or "untiled".
std::string TileText(const fusion::TileChoice& tile);

}  // namespace kiln::autotune
