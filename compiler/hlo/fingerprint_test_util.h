// Helpers shared by the fingerprint tests (fingerprint_*_test.cc): the
// fingerprint of hand-written HLO text, a comparison of every sub-hash, and
// the hand-written modules the invariance and sensitivity tests share.
// Failures are reported through GoogleTest; test-only code.
#pragma once

#include <algorithm>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/parser.h"

namespace kiln::hlo {

// Hashes in failure messages as hex (found by gtest through ADL).
inline void PrintTo(const Hash128& h, std::ostream* os) { *os << h.Hex(); }

namespace fingerprint_testing {

inline Result<Fingerprint> FingerprintText(std::string_view text,
                                          const FingerprintOptions& options = {}) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseModule(text, "test.hlo"));
  return FingerprintModule(*module, options);
}

// Fingerprint of hand-written text; a parse or fingerprint error fails the test.
inline Fingerprint Fp(std::string_view text, const FingerprintOptions& options = {}) {
  Result<Fingerprint> fp = FingerprintText(text, options);
  EXPECT_TRUE(fp.has_value()) << (fp ? "" : fp.error().ToString()) << "\n" << text;
  return fp.value_or(Fingerprint{});
}

inline std::vector<Hash128> CalledHashes(const Fingerprint& fp) {
  std::vector<Hash128> out;
  for (const CalledComputationHash& c : fp.called_computations) out.push_back(c.hash);
  return out;
}

// The same, in hash order (computations may be listed in another order).
inline std::vector<Hash128> SortedCalledHashes(const Fingerprint& fp) {
  std::vector<Hash128> out = CalledHashes(fp);
  std::sort(out.begin(), out.end());
  return out;
}

// Every sub-hash and the key equal (names of called computations aside).
inline void ExpectSameFingerprint(const Fingerprint& a, const Fingerprint& b,
                                  const std::string& what) {
  EXPECT_EQ(a.key, b.key) << what;
  EXPECT_EQ(a.parameter_shapes, b.parameter_shapes) << what;
  EXPECT_EQ(a.entry_body, b.entry_body) << what;
  EXPECT_EQ(SortedCalledHashes(a), SortedCalledHashes(b)) << what;
  EXPECT_EQ(a.module_config, b.module_config) << what;
  EXPECT_EQ(a.options, b.options) << what;
  EXPECT_EQ(a.target, b.target) << what;
}

// Two spellings of one graph (used by the invariance and sensitivity tests).

inline constexpr std::string_view kOrderA = R"(
HloModule order_a

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (p0: f32[2,3], p1: f32[2,3]) -> (f32[2,3], f32[2]) {
  %p0 = f32[2,3] parameter(0)
  %p1 = f32[2,3] parameter(1)
  %a = f32[2,3] add(%p0, %p1)
  %m = f32[2,3] multiply(%p0, %p1)
  %d = f32[2,3] subtract(%a, %m)
  %zero = f32[] constant(0)
  %r = f32[2] reduce(%m, %zero), dimensions={1}, to_apply=%add
  ROOT %t = (f32[2,3], f32[2]) tuple(%d, %r)
}
)";

// kOrderA with independent instructions in another order, other names and
// the computations in another order of definition where allowed.
inline constexpr std::string_view kOrderB = R"(
HloModule order_b

%sum (a: f32[], b: f32[]) -> f32[] {
  %b = f32[] parameter(1)
  %a = f32[] parameter(0)
  ROOT %r = f32[] add(%a, %b)
}

ENTRY %entry {
  %zero = f32[] constant(0)
  %q1 = f32[2,3] parameter(1)
  %q0 = f32[2,3] parameter(0)
  %prod = f32[2,3] multiply(%q0, %q1)
  %red = f32[2] reduce(%prod, %zero), dimensions={1}, to_apply=%sum
  %plus = f32[2,3] add(%q0, %q1)
  %diff = f32[2,3] subtract(%plus, %prod)
  ROOT %out = (f32[2,3], f32[2]) tuple(%diff, %red)
}
)";

// A module with three parameters and two called computations, one component
// of the fingerprint each (the sub-hash tests).
inline constexpr std::string_view kComponents = R"(
HloModule components

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

%mul (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] multiply(%x, %y)
}

ENTRY %main {
  %p0 = f32[4] parameter(0)
  %p1 = f32[4] parameter(1)
  %p2 = f32[] parameter(2)
  %r = f32[] reduce(%p1, %p2), dimensions={0}, to_apply=%add
  %q = f32[] reduce(%p0, %p2), dimensions={0}, to_apply=%mul
  %s = f32[] add(%r, %q)
  %b = f32[4] broadcast(%s), dimensions={}
  ROOT %o = f32[4] add(%p0, %b)
}
)";

}  // namespace fingerprint_testing
}  // namespace kiln::hlo
