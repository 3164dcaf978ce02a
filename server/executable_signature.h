// The entry parameters of an executable, rebuilt from its parameter buffers.
//
// Tuple parameters are reassembled from their buffers' index paths. Fails
// for a parameter that holds no array (a token or an empty tuple), naming
// it. Pure; thread-safe.
#pragma once

#include <vector>

#include "compiler/hlo/shape.h"
#include "compiler/hlo/status.h"
#include "runtime/program/program.h"

namespace kiln::server {

Result<std::vector<hlo::Shape>> ExecutableParameterShapes(const runtime::Program& program);

// "f32[2,3]" (no layout) for arrays; tuples as "(f32[2], s32[])".
std::string PlainShapeText(const hlo::Shape& shape);

}  // namespace kiln::server
