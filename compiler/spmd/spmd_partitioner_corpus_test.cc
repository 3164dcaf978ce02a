// The partitioner on the corpus's pre-partition modules.

#include <gtest/gtest.h>

#include "base/str_cat.h"
#include "compiler/spmd/partition_test_util.h"

namespace kiln::spmd {
namespace {

using testing::SameValuesPartitioned;

class CorpusDotTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CorpusDotTest, SameValuesAsWhole) {
  auto module = testing::ParseCorpus(GetParam());
  ASSERT_NE(module, nullptr);
  int64_t devices = ModuleDeviceCount(*module);
  EXPECT_TRUE(SameValuesPartitioned(*module, devices, 1));
  EXPECT_TRUE(SameValuesPartitioned(*module, devices, 2));
}

INSTANTIATE_TEST_SUITE_P(
    CollectiveOpsE2E, CorpusDotTest,
    ::testing::Values("xla-tests/collective_ops_e2e_test__DotBatchAndNonContracting.hlo",
                      "xla-tests/collective_ops_e2e_test__DotContractingAndContracting.hlo",
                      "xla-tests/collective_ops_e2e_test__DotContractingAndReplicated.hlo",
                      "xla-tests/collective_ops_e2e_test__DotContractingNonContractingAndContractingNonContracting.hlo",
                      "xla-tests/collective_ops_e2e_test__DotNonContractingAndContracting.hlo",
                      "xla-tests/collective_ops_e2e_test__DusSingleDimensionInPartitionMode.hlo",
                      "xla-tests/collective_ops_e2e_test__WindowedEinsumE2EAllGatherF8.hlo",
                      "xla-tests/collective_ops_e2e_test__WindowedEinsumE2EAllGatherMultiConsumerF8.hlo",
                      "xla-tests/collective_ops_e2e_test__WindowedEinsumE2EAllgatherMultiConsumer.hlo",
                      "xla-hlo-files/tools__tests__spmd.hlo",
                      "xla-hlo-files/tools__multihost_hlo_runner__data__sharded_2_devices.hlo",
                      "xla-hlo-files/tools__data__must_alias_with_sharding.hlo"));

struct Collectives {
  int all_gather = 0;
  int all_reduce = 0;
  int reduce_scatter = 0;
};

Collectives CountCollectives(const hlo::Module& module) {
  return {testing::CountOpcode(module, hlo::Opcode::kAllGather), testing::CountOpcode(module, hlo::Opcode::kAllReduce),
          testing::CountOpcode(module, hlo::Opcode::kReduceScatter)};
}

// The collectives each dot gets, as XLA's partitioner chooses them: partial
// sums over a cut contracting dimension reduce-scattered into the result's
// layout, a small operand gathered where the other one's layout is kept.
TEST(CorpusStructureTest, DotsGetTheCollectivesTheyNeed) {
  struct Case {
    const char* path;
    const char* lhs;
    const char* root;
    Collectives expected;
  };
  for (const Case& c : {
           Case{"DotContractingAndContracting", "f32[16,4]", "f32[8,4]", {0, 0, 1}},
           Case{"DotContractingAndReplicated", "f32[16,4]", "f32[8,4]", {0, 0, 1}},
           Case{"DotNonContractingAndContracting", "f32[8,8]", "f32[8,4]", {1, 0, 0}},
           Case{"DotContractingNonContractingAndContractingNonContracting", "f32[8,4]", "f32[8,2]", {1, 0, 1}},
           Case{"DotBatchAndNonContracting", "f32[2,16,8]", "f32[2,16,4]", {1, 0, 0}},
           Case{"WindowedEinsumE2EAllgatherMultiConsumer", "bf16[2,4,48]", "bf16[2,4,48]", {1, 0, 1}},
       }) {
    SCOPED_TRACE(c.path);
    auto module = testing::ParseCorpus(StrCat("xla-tests/collective_ops_e2e_test__", c.path, ".hlo"));
    ASSERT_NE(module, nullptr);
    auto partitioned = testing::PartitionOrFail(*module, ModuleDeviceCount(*module));
    ASSERT_NE(partitioned, nullptr);
    EXPECT_EQ(partitioned->entry()->parameters()[0]->shape().ToString(), c.lhs);
    EXPECT_EQ(partitioned->entry()->root()->shape().ToString(), c.root);
    Collectives got = CountCollectives(*partitioned);
    EXPECT_EQ(got.all_gather, c.expected.all_gather);
    EXPECT_EQ(got.all_reduce, c.expected.all_reduce);
    EXPECT_EQ(got.reduce_scatter, c.expected.reduce_scatter);
  }
}

// Modules too large to evaluate: they partition, each device holds its
// shard, and the batch-parallel attention step needs only the loss summed.
TEST(CorpusStructureTest, LargeModulesPartition) {
  struct Case {
    const char* path;
    const char* first_parameter;
  };
  for (const Case& c : {
           Case{"xla-hlo-files/tools__multihost_hlo_runner__data__sharded_computation.hlo", "f16[16,512,3,12,64]"},
           Case{"xla-tests/collective_ops_e2e_test__WindowedEinsumE2EPartial.hlo", "f32[4,1024,3264]"},
           Case{"xla-tests/collective_pipeline_parallelism_test__JaxExampleWithDecomposedCycle.hlo",
                "f32[1,4096,4096]"},
           Case{"jax-dumps/tools__benchmarks__hlo__nv_maxtext_1n1g_jit_train_step_before_optimization.hlo", ""},
       }) {
    SCOPED_TRACE(c.path);
    auto module = testing::ParseCorpus(c.path);
    ASSERT_NE(module, nullptr);
    EXPECT_TRUE(NeedsPartitioning(*module));
    auto partitioned = testing::PartitionOrFail(*module, ModuleDeviceCount(*module));
    ASSERT_NE(partitioned, nullptr);
    if (*c.first_parameter != '\0') {
      EXPECT_EQ(partitioned->entry()->parameters()[0]->shape().ToString(), c.first_parameter);
    }
  }
  auto attention = testing::ParseCorpus("xla-hlo-files/tools__multihost_hlo_runner__data__sharded_computation.hlo");
  ASSERT_NE(attention, nullptr);
  auto partitioned = testing::PartitionOrFail(*attention, 2);
  ASSERT_NE(partitioned, nullptr);
  Collectives got = CountCollectives(*partitioned);
  EXPECT_EQ(got.all_gather, 0);
  EXPECT_EQ(got.all_reduce, 1);
}

// Already partitioned modules are recognized and left alone; their device
// count comes from their shardings and replica groups.
TEST(CorpusStructureTest, PartitionedModulesAreRecognized) {
  struct Case {
    const char* path;
    int64_t devices;
  };
  for (const Case& c : {
           Case{"jax-dumps/tools__benchmarks__hlo__hlo_llama31_8b_bf16_1x8.hlo", 8},
           Case{"jax-dumps/tools__benchmarks__hlo__hlo_llama31_8b_bf16_2x8.hlo", 16},
           Case{"jax-dumps/tools__benchmarks__hlo__hlo_mixtral_8x7b_bf16_1x8.hlo", 8},
           Case{"jax-dumps/tools__benchmarks__hlo__hlo_llama31_405b_bf16_64x8.hlo", 512},
           Case{"torchxla-dumps/GraphHelper__misc__sharding_fsdp.hlo", 2},
           Case{"xla-tests/collective_ops_e2e_test__AllGatherQuantizeCollectiveQuantizer.hlo", 4},
       }) {
    SCOPED_TRACE(c.path);
    auto module = testing::ParseCorpus(c.path);
    ASSERT_NE(module, nullptr);
    EXPECT_TRUE(IsPartitioned(*module));
    EXPECT_FALSE(NeedsPartitioning(*module));
    EXPECT_EQ(ModuleDeviceCount(*module), c.devices);
    EXPECT_FALSE(PartitionModule(*module, c.devices).has_value());
  }
  // Replicated-only annotations need no partitioning.
  auto replicated = testing::ParseCorpus("xla-hlo-files/tools__data__must_alias_with_sharding.hlo");
  ASSERT_NE(replicated, nullptr);
  EXPECT_FALSE(IsPartitioned(*replicated));
  EXPECT_FALSE(NeedsPartitioning(*replicated));
}

// A shard_map body (manual region) with a while loop and collective-permute
// cannot run whole; its values are checked against what the loop does: three
// trips of (a, b) -> (a from the previous device, 2a).
TEST(CorpusManualTest, MemcpyP2pWhileLoopRunsPerDevice) {
  auto module = testing::ParseCorpus("xla-tests/collective_ops_e2e_test__MemcpyP2pWhileLoopCorrectness.hlo");
  ASSERT_NE(module, nullptr);
  ASSERT_FALSE(IsPartitioned(*module));
  auto partitioned = testing::PartitionOrFail(*module, 4);
  ASSERT_NE(partitioned, nullptr);
  EXPECT_EQ(testing::CountOpcode(*partitioned, hlo::Opcode::kCollectivePermute), 1);
  EXPECT_EQ(partitioned->entry()->parameters()[0]->shape().ToString(), "bf16[32,96]");
  EXPECT_EQ(partitioned->entry()->root()->shape().ToString(), "(bf16[32,96], bf16[32,96])");

  auto args = runtime::io::RandomArguments(*module, 7);
  ASSERT_TRUE(args.has_value()) << args.error();
  auto per_device = SplitArguments(*module, *args, 4);
  ASSERT_TRUE(per_device.has_value()) << per_device.error();
  auto results = runtime::EvaluateOnSlice(*partitioned, runtime::SliceShape{1, 4}, *per_device);
  ASSERT_TRUE(results.has_value()) << results.error();
  auto root = EntryRootSharding(*module, 4);
  ASSERT_TRUE(root.has_value());
  auto out = hlo::AssembleLiteral(*results, module->entry()->root()->shape(), *root);
  ASSERT_TRUE(out.has_value()) << out.error();

  // Column block d of the results holds device d's rows: a from device d-3,
  // 2a from device d-2 (mod 4).
  const hlo::Literal& input = (*args)[0];
  const hlo::Literal& moved = out->tuple_elements()[0];
  const hlo::Literal& doubled = out->tuple_elements()[1];
  for (int64_t d = 0; d < 4; ++d) {
    for (int64_t r = 0; r < 32; ++r) {
      for (int64_t c = 0; c < 96; ++c) {
        int64_t at = r * 384 + d * 96 + c;
        double a3 = input.GetAsDouble(((d + 1) % 4 * 32 + r) * 96 + c);
        double a2 = input.GetAsDouble(((d + 2) % 4 * 32 + r) * 96 + c);
        ASSERT_EQ(moved.GetAsDouble(at), a3) << "device " << d << " row " << r << " column " << c;
        ASSERT_EQ(doubled.GetAsDouble(at), 2 * a2) << "device " << d << " row " << r << " column " << c;
      }
    }
  }
}

}  // namespace
}  // namespace kiln::spmd
