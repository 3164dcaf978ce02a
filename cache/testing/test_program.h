// Test helper: the bytes of a real, verifiable executable compiled (as far
// as its envelope says) as `key` for `chip`: one f32[2] parameter that is
// its result. Header-only; for tests that need a program's identity.
#pragma once

#include <string>

#include "cache/entry.h"
#include "runtime/format/program.h"

namespace kiln::cache::testing {

inline std::string TestProgramBytes(const Hash128& key, const std::string& chip) {
  runtime::Program program;
  program.key = key.Hex();
  program.chip = chip;
  program.plan = "heuristic";
  program.buffers.push_back(
      {.kind = runtime::BufferKind::kParameter, .shape = "f32[2]", .size_bytes = 8, .parameter_number = 0});
  program.parameters = {0};
  program.result_shape = "f32[2]";
  program.results = {0};
  Result<std::vector<uint8_t>> bytes = runtime::SerializeProgram(program);
  return bytes ? std::string(bytes->begin(), bytes->end()) : std::string();
}

}  // namespace kiln::cache::testing
