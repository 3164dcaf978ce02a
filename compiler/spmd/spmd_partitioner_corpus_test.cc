// The partitioner on the corpus's pre-partition modules.

#include <gtest/gtest.h>

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
  auto out = AssembleLiteral(*results, module->entry()->root()->shape(), *root);
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
