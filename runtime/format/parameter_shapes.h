// The entry parameters of an executable, rebuilt from its parameter buffers.
//
// Tuple parameters are reassembled from their buffers' index paths. Fails
// for a parameter that holds no array (a token or an empty tuple), naming
// it. Pure; thread-safe.
#pragma once

#include <vector>

#include "base/status.h"
#include "compiler/hlo/shape.h"
#include "runtime/format/program.h"

namespace kiln::runtime {

Result<std::vector<hlo::Shape>> ProgramParameterShapes(const Program& program);

}  // namespace kiln::runtime
