// Every module of the HLO corpus (KILN_CORPUS_DIR/hlo/**/*.hlo) verifies,
// except the ones on the allow-list below: modules that are invalid HLO by
// XLA's own rules (they come from XLA tests that feed passes or importers
// unverified input). Each allow-listed module must fail with the expected
// message, so a verifier change that accepts it, or rejects it for another
// reason, shows up here.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/test_corpus.h"
#include "compiler/hlo/verifier.h"

namespace kiln::hlo {
namespace {

namespace fs = std::filesystem;

using testing::kKnownInvalidModules;
using testing::kMinCorpusModules;

// Corpus modules that are not valid HLO, by path under <corpus>/hlo, with a
// substring of the error they must fail with.
const std::map<std::string, std::string>& InvalidModules() {
  static const std::map<std::string, std::string> modules = {
      // dot with no contracting or batch dimensions is an outer product:
      // s8[8] x s16[8] gives [8,8], not the declared s32[8]. The test runs
      // operand_upcaster through hlo-opt on an unverified module.
      {"xla-hlo-files/hlo__transforms__tests__operand_upcaster.hlo",
       "instruction %result in computation %test_dot (line 18): result shape s32[8] does not "
       "match the expected s32[8,8]"},
      // The batch of bf16[8,4,5,5,1] is 8 and pad -1_-1 leaves spatial
      // dimension 0 empty: the result is [8,0,5,5,32], not [4,4,5,5,32].
      {"xla-hlo-files/hlo__transforms__tests__rewrite_bf16_conv_to_onednn__part2.hlo",
       "result shape bf16[4,4,5,5,32] does not match the expected bf16[8,0,5,5,32]"},
      // rng takes exactly two operands (XLA's ShapeVerifier::HandleRng
      // checks the count); these pass an extra MHLO-style shape operand.
      {"xla-hlo-files/hlo__transforms__tests__rng_expander__part1.hlo",
       "rng expects 2 operand(s), has 3"},
      {"xla-hlo-files/hlo__transforms__tests__rng_expander__part2.hlo",
       "rng expects 2 operand(s), has 3"},
      {"xla-hlo-files/hlo__transforms__tests__rng_expander__part4.hlo",
       "rng expects 2 operand(s), has 3"},
      {"xla-hlo-files/hlo__transforms__tests__rng_expander__part5.hlo",
       "rng expects 2 operand(s), has 3"},
      {"xla-hlo-files/hlo__transforms__tests__rng_expander__part6.hlo",
       "rng expects 2 operand(s), has 3"},
      // Input of the HLO->MHLO importer test, never verified: a 3x3 window
      // over a 2x2 kernel, and further on map/sort/scatter/select-and-scatter
      // computations that return 1-tuples and a reduce with an f32[4]
      // reducer, all rejected by XLA's shape inference.
      {"xla-hlo-files/hlo__translate__hlo_to_mhlo__tests__import.hlo",
       "instruction %convolution.4 in computation %test_conv (line 493): window size 3 of "
       "spatial dimension 0 does not match the rhs dimension size 2"},
      // entry_computation_layout says f32 where the entry parameter and root
      // are f16 (XLA's VerifyEntryComputationLayout rejects it).
      {"xla-hlo-files/hlo__translate__hlo_to_mhlo__tests__layouts_and_names__part2.hlo",
       "entry_computation_layout parameter 0 f32[524,524,524]"},
      // The test's point: a tuple whose declared shape disagrees with its
      // operands.
      {"xla-tests/tuple_test__BadTupleShapeFailsGracefully.hlo",
       "instruction %tuple in computation %test (line 5): result shape (f32[3], f32[2]) does "
       "not match the expected (f32[3], f32[3])"},
  };
  return modules;
}

using testing::CorpusModules;
using testing::CorpusRoot;
using testing::ReadTextFile;

TEST(VerifierCorpusTest, EveryValidModuleVerifies) {
  const std::vector<fs::path> files = CorpusModules();
  ASSERT_GE(files.size(), kMinCorpusModules) << "corpus missing under " << CorpusRoot();
  int verified = 0, rejected_as_expected = 0, awaiting_inference = 0;
  std::map<std::string, bool> seen;
  for (const fs::path& path : files) {
    const std::string name = path.lexically_relative(CorpusRoot() / "hlo").generic_string();
    Result<std::unique_ptr<Module>> module = ParseModule(ReadTextFile(path), name);
    auto invalid = InvalidModules().find(name);
    if (invalid != InvalidModules().end()) seen[name] = true;
    if (!module) {
      // Modules with instructions written without a shape wait for the
      // parser to use shape inference; the round-trip test tracks those.
      if (module.error().ToString().find("cannot infer the shape") != std::string::npos) {
        ++awaiting_inference;
        continue;
      }
      ADD_FAILURE() << name << ": does not parse: " << module.error().ToString();
      continue;
    }
    Status status = VerifyModule(**module);
    if (invalid == InvalidModules().end()) {
      if (status) {
        ++verified;
      } else {
        ADD_FAILURE() << name << ": " << status.error().ToString();
      }
      continue;
    }
    if (status) {
      ADD_FAILURE() << name << ": is on the invalid-module list but verifies";
    } else if (status.error().ToString().find(invalid->second) == std::string::npos) {
      ADD_FAILURE() << name << ": expected an error containing \"" << invalid->second
                    << "\", got: " << status.error().ToString();
    } else {
      ++rejected_as_expected;
    }
  }
  EXPECT_EQ(InvalidModules().size(), static_cast<size_t>(kKnownInvalidModules));
  EXPECT_EQ(rejected_as_expected, kKnownInvalidModules);
  for (const auto& [name, reason] : InvalidModules()) {
    EXPECT_TRUE(seen.contains(name)) << "invalid-module list names a missing file: " << name;
  }
  std::cout << "[ corpus   ] " << verified << " verified, " << rejected_as_expected
            << " rejected as expected, " << awaiting_inference
            << " awaiting shape inference in the parser\n";
}

}  // namespace
}  // namespace kiln::hlo
