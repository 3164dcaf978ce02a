// A module worth tuning, for the end-to-end tests of `kiln tune` and of the
// server's tuning jobs: a dot with a prologue and an epilogue, where a few
// trials find faster tiles and fusion and whose outputs are cheap to check
// (`kiln tune --trials 12` takes about 0.1 s).
#pragma once

namespace kiln::testing {

inline constexpr const char* kTunableModule = R"(HloModule tunable
ENTRY e {
  x = f32[512,1024] parameter(0)
  w = f32[1024,512] parameter(1)
  bias = f32[512] parameter(2)
  s = f32[512,1024] sine(x)
  m = f32[512,1024] multiply(s, x)
  d = f32[512,512] dot(m, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[512,512] broadcast(bias), dimensions={1}
  o = f32[512,512] add(d, bb)
  ROOT r = f32[512,512] logistic(o)
})";

}  // namespace kiln::testing
