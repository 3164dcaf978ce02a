// Test support for the partitioner: run a module whole and partitioned on a
// simulated slice with the same random arguments and compare the results.
// Header-only, for *_test.cc files.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/test_corpus.h"
#include "compiler/spmd/entry_shardings.h"
#include "compiler/spmd/spmd_partitioner.h"
#include "runtime/eval/evaluator.h"
#include "runtime/io/literal_compare.h"
#include "runtime/io/random_inputs.h"
#include "runtime/spmd/slice_execution.h"

namespace kiln::spmd::testing {

inline std::unique_ptr<hlo::Module> ParseOrDie(std::string_view text, std::string_view name = "test.hlo") {
  auto module = hlo::ParseModule(text, name);
  EXPECT_TRUE(module.has_value()) << (module ? "" : module.error().ToString());
  return module ? std::move(*module) : nullptr;
}

inline std::unique_ptr<hlo::Module> ParseCorpus(std::string_view relative) {
  std::string text = hlo::testing::ReadTextFile(hlo::testing::CorpusRoot() / "hlo" / std::string(relative));
  EXPECT_FALSE(text.empty()) << "corpus module " << relative << " missing";
  return text.empty() ? nullptr : ParseOrDie(text, relative);
}

// Partitions `module` for `devices` partitions; fails the test on error.
inline std::unique_ptr<hlo::Module> PartitionOrFail(const hlo::Module& module, int64_t devices) {
  auto partitioned = PartitionModule(module, devices);
  EXPECT_TRUE(partitioned.has_value()) << (partitioned ? "" : partitioned.error().ToString());
  return partitioned ? std::move(*partitioned) : nullptr;
}

// The module evaluated whole and partitioned on `devices` simulated
// partitions agree on random arguments from `seed` (the corpus tolerance);
// the error says how they differ.
inline ::testing::AssertionResult SameValuesPartitioned(const hlo::Module& module, int64_t devices,
                                                        uint64_t seed = 1) {
  auto args = runtime::io::RandomArguments(module, seed);
  if (!args) return ::testing::AssertionFailure() << "arguments: " << args.error();
  auto expected = runtime::EvaluateModule(module, *args);
  if (!expected) return ::testing::AssertionFailure() << "whole: " << expected.error();
  auto partitioned = PartitionModule(module, devices);
  if (!partitioned) return ::testing::AssertionFailure() << "partition: " << partitioned.error();
  auto per_device = SplitArguments(module, *args, devices);
  if (!per_device) return ::testing::AssertionFailure() << "split: " << per_device.error();
  auto results = runtime::EvaluateOnSlice(**partitioned, runtime::SliceShape{1, devices}, *per_device);
  if (!results) {
    return ::testing::AssertionFailure() << "partitioned: " << results.error() << "\n"
                                         << hlo::PrintModule(**partitioned);
  }
  auto root = EntryRootSharding(module, devices);
  if (!root) return ::testing::AssertionFailure() << "root sharding: " << root.error();
  auto assembled = hlo::AssembleLiteral(*results, module.entry()->root()->shape(), *root);
  if (!assembled) {
    return ::testing::AssertionFailure() << "assemble: " << assembled.error() << "\n"
                                         << hlo::PrintModule(**partitioned);
  }
  Status same = runtime::io::CompareLiterals(*expected, *assembled);
  if (!same) {
    return ::testing::AssertionFailure() << same.error() << "\n" << hlo::PrintModule(**partitioned);
  }
  return ::testing::AssertionSuccess();
}

// How many instructions of `module` (every computation) have `opcode`.
inline int CountOpcode(const hlo::Module& module, hlo::Opcode opcode) {
  int n = 0;
  for (const auto& comp : module.computations()) {
    for (const auto& instr : comp->instructions()) n += instr->opcode() == opcode;
  }
  return n;
}

// The last while loop of `module`'s entry; nullptr when it has none.
inline const hlo::Instruction* EntryWhile(const hlo::Module& module) {
  const hlo::Instruction* loop = nullptr;
  for (const auto& instr : module.entry()->instructions()) {
    if (instr->opcode() == hlo::Opcode::kWhile) loop = instr.get();
  }
  return loop;
}

}  // namespace kiln::spmd::testing
