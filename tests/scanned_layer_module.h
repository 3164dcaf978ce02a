// A scanned layer for the tests of the tuner's body search: eight trips of
// a while loop whose body computes tanh(x * 1.5), feeds it to a dot and to
// the residual add (two consumers, so the heuristic keeps it in a kernel of
// its own) and takes a softmax over the dot. Header-only.
#pragma once

#include <string_view>

namespace kiln::testing {

inline constexpr std::string_view kScannedLayer = R"(HloModule scanned
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
cond {
  p = (s32[], f32[512,1024], f32[1024,1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[512,1024], f32[1024,1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[512,1024] get-tuple-element(p), index=1
  w = f32[1024,1024] get-tuple-element(p), index=2
  c = f32[] constant(1.5)
  cb = f32[512,1024] broadcast(c), dimensions={}
  m = f32[512,1024] multiply(x, cb)
  t = f32[512,1024] tanh(m)
  h = f32[512,1024] dot(t, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ninf = f32[] constant(-inf)
  mx = f32[512] reduce(h, ninf), dimensions={1}, to_apply=max
  mxb = f32[512,1024] broadcast(mx), dimensions={0}
  d = f32[512,1024] subtract(h, mxb)
  e = f32[512,1024] exponential(d)
  z = f32[] constant(0)
  s = f32[512] reduce(e, z), dimensions={1}, to_apply=add
  sb = f32[512,1024] broadcast(s), dimensions={0}
  y = f32[512,1024] divide(e, sb)
  y2 = f32[512,1024] add(y, t)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT r = (s32[], f32[512,1024], f32[1024,1024]) tuple(i1, y2, w)
}
ENTRY e {
  x = f32[512,1024] parameter(0)
  w = f32[1024,1024] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[512,1024], f32[1024,1024]) tuple(zero, x, w)
  wl = (s32[], f32[512,1024], f32[1024,1024]) while(init), condition=cond, body=body
  ROOT out = f32[512,1024] get-tuple-element(wl), index=1
})";

}  // namespace kiln::testing
