// StableHLO modules the end-to-end tests of the kiln command and the
// server share.
#pragma once

namespace kiln::testing {

// As jax.jit(lambda x, y: (x + y) * x).lower(x, y).as_text() prints it,
// with locations: f32[4] (x + y) * x.
inline constexpr const char* kJaxAdd = R"(#loc1 = loc("x")
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32> loc("x"), %arg1: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = ""}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32> loc(#loc2)
    %1 = stablehlo.multiply %0, %arg0 : tensor<4xf32> loc(#loc2)
    return %1 : tensor<4xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("f.py":3:10)
)";

}  // namespace kiln::testing
