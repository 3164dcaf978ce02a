// How many devices a module's sharding annotations spread it over.
//
// Modules traced before SPMD partitioning (MaxText train steps) have global
// shapes and `sharding={devices=[8,1]<=[8]}` annotations; their buffers are
// divided over that many chips. Pure function; thread-safe.
#pragma once

#include <cstdint>

#include "compiler/hlo/computation.h"

namespace kiln::fusion {

// The largest device count of any `sharding={devices=[...]...}` attribute
// of the computation's instructions (the product of the tile assignment
// dimensions); 1 when there is none.
int64_t ShardedDeviceCount(const hlo::Computation& computation);

}  // namespace kiln::fusion
