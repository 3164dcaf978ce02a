// Temporary: forwards to base/status.h while callers move to it and to the
// constructors per error code (issue 12). MakeError makes an error that no
// one classified yet, coded internal.
#pragma once

#include <string>
#include <utility>

#include "base/status.h"

namespace kiln {

inline std::unexpected<Error> MakeError(std::string message) {
  return std::unexpected<Error>(InternalError(std::move(message)));
}

}  // namespace kiln
