// Random arguments for a module's entry parameters, for `kiln run
// --random-inputs SEED` and the corpus harness.
//
// Values are chosen so that most programs run meaningfully:
//   floating-point (and both parts of complex)  uniform in [-1, 1), exact in f32
//   integers                                    uniform in [0, 4) (capped by the
//                                               type's maximum: s2 gives [0, 2))
//                                               so they work as indices
//   pred                                        true or false
//   token                                       a token (no data)
// Tuple shapes are filled element by element. Dynamic dimensions take their
// bound. The values depend only on the seed, the parameter number and the
// shape (not on other parameters), and are the same on every platform.
//
// Fails on opaque parameters and unbounded dimensions. Pure;
// thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/module.h"

namespace kiln::runtime::io {

// A value of `shape` from `seed`.
Result<hlo::Literal> RandomLiteral(const hlo::Shape& shape, uint64_t seed);

// One value per entry parameter, in parameter order.
Result<std::vector<hlo::Literal>> RandomArguments(const hlo::Module& module, uint64_t seed);
// The same values from the parameters' shapes alone (an executable's).
Result<std::vector<hlo::Literal>> RandomArguments(std::span<const hlo::Shape> parameter_shapes,
                                                  uint64_t seed);

}  // namespace kiln::runtime::io
