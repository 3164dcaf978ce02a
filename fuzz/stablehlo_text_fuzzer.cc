// libFuzzer harness: the StableHLO text front end as `kiln parse` and the
// other commands run it (MLIR text read, converted to HLO, verified,
// fingerprinted), plus its contract that the printed HLO of a converted
// module parses back with the same key (`kiln parse --print-hlo`), and
// that shape refinement of a dynamic module either refines or refuses.
//
// Any input ends in a module or an error; a crash, a hang, a leak or a
// broken contract (reported with __builtin_trap) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "compiler/stablehlo/shape_refinement.h"
#include "compiler/stablehlo/text_parser.h"
#include "fuzz/stablehlo_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto mlir = stablehlo::ParseMlirText(text, "fuzz.mlir");
  if (!mlir) return 0;
  hlo::Hash128 key;
  std::unique_ptr<hlo::Module> module = fuzz::ConvertedAndKeyed(*mlir, &key);
  if (module == nullptr) return 0;
  const std::string printed = hlo::PrintModule(*module);
  auto reparsed = hlo::ParseModule(printed, "printed.hlo");
  if (!reparsed) fuzz::FailCheck("printed HLO does not parse", reparsed.error().message + "\n" + printed);
  auto again = hlo::FingerprintModule(**reparsed, {});
  if (!again || again->key != key) fuzz::FailCheck("printed HLO has another key", printed);
  if (stablehlo::NeedsRefinement(*module)) {
    // Every dynamic dimension as 2, dimension arguments as 2.
    stablehlo::RefineOptions options;
    for (const hlo::Instruction* p : module->entry()->parameters()) {
      hlo::Shape shape = p->shape();
      if (shape.IsArray()) {
        std::vector<int64_t> dims = shape.dimensions();
        for (int64_t d = 0; d < shape.rank(); ++d) {
          if (shape.is_dynamic_dimension(d)) dims[d] = 2;
        }
        shape = hlo::Shape(shape.element_type(), dims);
      }
      options.parameter_shapes.push_back(shape);
      options.parameter_values.push_back(shape.IsArray() && shape.rank() == 0 && hlo::IsInteger(shape.element_type())
                                             ? std::optional<int64_t>(2)
                                             : std::nullopt);
    }
    if (stablehlo::RefineShapes(*module, options) && !hlo::VerifyModule(*module)) {
      fuzz::FailCheck("a refined module does not verify", hlo::PrintModule(*module));
    }
  }
  return 0;
}
