// The StableHLO harnesses' kept findings (fuzz/regressions/stablehlo_*),
// replayed as the harnesses ran them.
#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/stablehlo/bytecode_reader.h"
#include "compiler/stablehlo/stablehlo_test_corpus.h"
#include "fuzz/regression_inputs.h"

namespace kiln::stablehlo {
namespace {

// nan_payload_in_check_constant: bf16 NaNs with payloads (0x7FFF) in a
// check's expected constant printed as `nan`, so the printed HLO had
// another key: constants of narrow floats keep HLO text's NaNs wherever
// they are made. entry_named_with_a_dash: the entry computation took the
// name of `@-ain`, which HLO text cannot hold; names are sanitized.
// module_name_with_a_dollar: likewise for `module @jit_fun_flat_ja$x`.
TEST(StablehloFuzzRegressionTest, PrintedHloOfKeptFindingsKeepsTheKey) {
  for (const char* name : {"nan_payload_in_check_constant", "entry_named_with_a_dash", "module_name_with_a_dollar"}) {
    const std::string input = fuzz::RegressionInput("stablehlo_text", name);
    ASSERT_FALSE(input.empty()) << name;
    Result<hlo::Hash128> key = testing::KeyOf(input, name);
    ASSERT_TRUE(key) << name << ": " << key.error().ToString();
    auto module = ParseAnyModule(input, name);
    ASSERT_TRUE(module);
    auto reparsed = hlo::ParseModule(hlo::PrintModule(**module), "printed.hlo");
    ASSERT_TRUE(reparsed) << name;
    auto printed_key = hlo::FingerprintModule(**reparsed, {});
    ASSERT_TRUE(printed_key);
    EXPECT_EQ(printed_key->key, *key) << name;
  }
}

// empty_tensor_attribute: a tensor attribute of no elements copied its no
// bytes from a null pointer (undefined behaviour the sanitizers report).
// region_reading_an_undefined_value: a region captured a value of another
// scope, never converted; it is an error of the op now.
// sharding_that_is_not_a_value: mhlo.sharding = ")" printed as HLO that
// does not parse; a sharding must be one HLO attribute value.
TEST(StablehloFuzzRegressionTest, AShardingThatIsNotAnHloValueIsRefused) {
  const std::string input = fuzz::RegressionInput("stablehlo_text", "sharding_that_is_not_a_value");
  ASSERT_FALSE(input.empty());
  Result<std::unique_ptr<hlo::Module>> module = ParseAnyModule(input, "s.mlir");
  ASSERT_FALSE(module.has_value());
  EXPECT_NE(module.error().ToString().find("argument 2: mhlo.sharding \")\" is not an HLO sharding"),
            std::string::npos)
      << module.error().ToString();
}

TEST(StablehloFuzzRegressionTest, KeptBytecodeFindingsReadOrFailCleanly) {
  for (const char* name : {"empty_tensor_attribute", "region_reading_an_undefined_value"}) {
    const std::string input = fuzz::RegressionInput("stablehlo_bytecode", name);
    ASSERT_FALSE(input.empty()) << name;
    Result<MlirModule> mlir = ReadBytecode(input, name);
    if (mlir) (void)ConvertToHlo(*mlir);
  }
}

}  // namespace
}  // namespace kiln::stablehlo
