// A module whose compile takes time while its parse does not: `dots`
// chained dots and tanhs, each a kernel of its own (about 50 ms of compile
// per 1,000 dots). `seed` is a constant added first: it changes the key, not
// the work. With `too_large`, the module also returns the negation of a
// 37 GiB parameter: it parses, verifies and plans, and then buffer
// assignment refuses it (422 does_not_fit: no v5e holds it) after the same
// work. For the end-to-end tests and kiln_fleet_bench. Header-only; pure.
#pragma once

#include <string>

namespace kiln::testing {

inline std::string ChainedDotModule(int seed, int dots, bool too_large = false) {
  std::string text = "HloModule chained_dots\n\nENTRY main {\n  p0 = f32[64,128]{1,0} parameter(0)\n"
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

}  // namespace kiln::testing
