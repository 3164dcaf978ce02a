// Shapes as the API shows them. (An executable's parameter shapes:
// runtime/format/parameter_shapes.h.) Pure; thread-safe.
#pragma once

#include <vector>

#include "base/status.h"
#include "compiler/hlo/shape.h"
#include "runtime/format/program.h"

namespace kiln::service {

// "f32[2,3]" (no layout) for arrays; tuples as "(f32[2], s32[])".
std::string PlainShapeText(const hlo::Shape& shape);

}  // namespace kiln::service
