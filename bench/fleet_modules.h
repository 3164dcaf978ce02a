// The HLO modules kiln_fleet_bench sends, each of its own key per `seed`
// (a constant that changes the key, not the work). Header-only; pure.
#pragma once

#include <string>

#include "tests/chained_dot_module.h"

namespace kiln::bench {

// tests/tunable_module.h's module (a dot with a prologue and an epilogue
// that a few trials tune, about 2x) plus `%shift` = `seed` added before the
// logistic: a tunable module per seed. `shift` names the constant (explain
// finds it when only the value changes).
inline std::string FleetTunableModule(int seed, const std::string& shift = "") {
  return "HloModule fleet_tunable_" + std::to_string(seed) +
         "\nENTRY e {\n"
         "  x = f32[512,1024] parameter(0)\n"
         "  w = f32[1024,512] parameter(1)\n"
         "  bias = f32[512] parameter(2)\n"
         "  s = f32[512,1024] sine(x)\n"
         "  m = f32[512,1024] multiply(s, x)\n"
         "  d = f32[512,512] dot(m, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
         "  bb = f32[512,512] broadcast(bias), dimensions={1}\n"
         "  o = f32[512,512] add(d, bb)\n"
         "  shift = f32[] constant(" + (shift.empty() ? std::to_string(seed) : shift) + ")\n"
         "  sb = f32[512,512] broadcast(shift), dimensions={}\n"
         "  os = f32[512,512] add(o, sb)\n"
         "  ROOT r = f32[512,512] logistic(os)\n"
         "}\n";
}

// A small module whose `%scale` is `scale` (a fast compile).
inline std::string FleetScaleModule(int seed, const std::string& scale) {
  return "HloModule fleet_scale_" + std::to_string(seed) +
         "\nENTRY main {\n"
         "  x = f32[8,128]{1,0} parameter(0)\n"
         "  scale = f32[] constant(" + scale + ")\n"
         "  b = f32[8,128]{1,0} broadcast(scale), dimensions={}\n"
         "  ROOT y = f32[8,128]{1,0} multiply(x, b)\n"
         "}\n";
}

// The chained-dot module (tests/chained_dot_module.h).
using kiln::testing::ChainedDotModule;

}  // namespace kiln::bench
