// A module's `input_output_alias` header: which results the caller lets the
// program write into the memory of which (donated) parameters, as JAX's
// donate_argnums and torch_xla's in-place updates declare. Buffer
// assignment makes such results in place of their parameters.
//
// The parser reads the form the HLO parser keeps (spaces removed):
// "{{0}:(0,{},may-alias),{1,2}:(1,{0})}". Errors say what is wrong and at
// which character. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kiln::buffers {

struct OutputAlias {
  std::vector<int64_t> output_index;     // the result's tuple index ({} for the whole result)
  int64_t parameter = 0;                 // the entry parameter number
  std::vector<int64_t> parameter_index;  // within that parameter ({} for all of it)
  bool must_alias = false;               // "must-alias"; otherwise may-alias
};

Result<std::vector<OutputAlias>> ParseOutputAliases(std::string_view text);

}  // namespace kiln::buffers
