// CheckCollectives: a slice program's collectives against the slice they
// run on, one case per way a hostile or mistaken module names devices.
#include "compiler/hlo/collective_groups.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/hlo/parser.h"

namespace kiln::hlo {
namespace {

// An all-reduce (or `op`) over f32[8] with `attributes`, in a module's entry.
std::string ModuleWith(const std::string& instruction) {
  return "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
         "ENTRY e {\n  p = f32[8]{0} parameter(0)\n  ROOT " +
         instruction + "\n}\n";
}

std::string Refusal(const std::string& instruction, int64_t replicas, int64_t partitions) {
  Result<std::unique_ptr<Module>> module = ParseModule(ModuleWith(instruction), "test.hlo");
  EXPECT_TRUE(module) << module.error().ToString();
  if (!module) return "";
  Status checked = CheckCollectives(**module, replicas, partitions);
  if (checked) return "";
  EXPECT_EQ(checked.error().reason(), "invalid_collective") << checked.error().ToString();
  return checked.error().ToString();
}

TEST(CheckCollectivesTest, GroupsThatFitTheSliceAreAccepted) {
  for (const std::string& ok :
       {std::string("r = f32[8]{0} all-reduce(p), channel_id=1, replica_groups={{0,1},{2,3}}, "
                    "use_global_device_ids=true, to_apply=add"),
        std::string("r = f32[8]{0} all-reduce(p), channel_id=1, replica_groups=[2,2]<=[4], use_global_device_ids=true, "
                    "to_apply=add"),
        std::string("r = f32[8]{0} all-reduce(p), channel_id=1, replica_groups={}, use_global_device_ids=true, "
                    "to_apply=add"),
        std::string("r = f32[8]{0} collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}")}) {
    EXPECT_EQ(Refusal(ok, 1, 4), "") << ok;
  }
}

TEST(CheckCollectivesTest, EveryWayOutOfTheSliceIsRefusedNamingTheInstruction) {
  struct Case {
    std::string instruction;
    std::string expected;
  };
  const Case cases[] = {
      {"r = f32[8]{0} all-reduce(p), channel_id=1, replica_groups={{0,1,2,3,4,5}}, use_global_device_ids=true, "
       "to_apply=add",
       "names id 4, outside the slice"},
      {"r = f32[8]{0} all-reduce(p), channel_id=1, replica_groups=[3,3]<=[9], use_global_device_ids=true, to_apply=add",
       "outside the slice"},
      {"r = f32[8]{0} all-reduce(p), channel_id=1, replica_groups={{0,9223372036854775807}}, "
       "use_global_device_ids=true, to_apply=add",
       "outside the slice"},
      {"r = f32[8]{0} all-reduce(p), channel_id=1, replica_groups={{0,1},{1,2,3}}, use_global_device_ids=true, "
       "to_apply=add",
       "names id 1 twice"},
      {"r = f32[8]{0} all-reduce(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add",
       "name 2 of the 4 ids"},
      {"r = f32[8]{0} all-reduce(p), channel_id=1, replica_groups={{0,1,2,3},{}}, use_global_device_ids=true, "
       "to_apply=add",
       "an empty group"},
      // No channel: cross-replica, over the slice's 1 replica.
      {"r = f32[8]{0} all-reduce(p), replica_groups={{0,1,2,3}}, to_apply=add", "names id 1, outside the slice"},
      {"r = f32[8]{0} collective-permute(p), channel_id=1, source_target_pairs={{0,9},{9,0}}",
       "is outside the slice's 4 partition(s)"},
      {"r = f32[8]{0} collective-permute(p), channel_id=1, source_target_pairs={{0,1},{2,1}}", "two sources"},
  };
  for (const Case& c : cases) {
    const std::string error = Refusal(c.instruction, 1, 4);
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.instruction << "\n  -> " << error;
    EXPECT_NE(error.find("instruction %r"), std::string::npos) << error;
    EXPECT_NE(error.find("computation e"), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace kiln::hlo
