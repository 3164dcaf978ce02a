// The HLO modules kiln_fleet_bench sends, each of its own key per `seed`
// (a constant that changes the key, not the work). Header-only; pure.
#pragma once

#include <string>

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

// `dots` chained dots and tanhs, each a kernel of its own: a compile that
// takes about 50 ms per 1,000 dots while its parse takes a few. With
// `too_large`, the module also returns the negation of a 37 GiB parameter:
// it parses, verifies and plans, and then buffer assignment refuses it
// (422 does_not_fit: no v5e holds it), after the same work.
inline std::string FleetChainModule(int seed, int dots, bool too_large = false) {
  std::string text = "HloModule fleet_chain\n\nENTRY main {\n  p0 = f32[64,128]{1,0} parameter(0)\n"
                     "  w = f32[128,128]{1,0} parameter(1)\n  c = f32[] constant(" +
                     std::to_string(seed) +
                     ")\n  cb = f32[64,128]{1,0} broadcast(c), dimensions={}\n"
                     "  a0 = f32[64,128]{1,0} add(p0, cb)\n";
  if (too_large) {
    text += "  big = f32[100000,100000]{1,0} parameter(2)\n  nb = f32[100000,100000]{1,0} negate(big)\n";
  }
  std::string prev = "a0";
  for (int i = 0; i < dots; ++i) {
    std::string d = "d", t = "t";  // (not "d" + to_string: GCC 12 warns of it, wrongly)
    d += std::to_string(i);
    t += std::to_string(i);
    text += "  " + d + " = f32[64,128]{1,0} dot(" + prev + ", w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
    text += std::string(i + 1 == dots && !too_large ? "  ROOT " : "  ") + t + " = f32[64,128]{1,0} tanh(" + d + ")\n";
    prev = t;
  }
  if (too_large) text += "  ROOT out = (f32[64,128]{1,0}, f32[100000,100000]{1,0}) tuple(" + prev + ", nb)\n";
  return text + "}\n";
}

}  // namespace kiln::bench
