// Test helper: hand-written Programs for the timing tests and benchmark,
// built the way lowering would (one buffer per parameter and per kernel
// output). Header-only; not part of the library's interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/hlo/parser.h"
#include "runtime/program/loaded_program.h"
#include "runtime/format/program.h"

namespace kiln::runtime::timing::testing {

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string chip = "v5e") {
    program_.key = "0123456789abcdef0123456789abcdef";
    program_.chip = std::move(chip);
    program_.plan = "test";
    program_.options = "{}";
  }

  // A parameter buffer of HLO array shape `shape`; returns its index.
  uint32_t Parameter(const std::string& shape) {
    uint32_t b = AddBuffer(BufferKind::kParameter, shape);
    program_.buffers[b].parameter_number = static_cast<int32_t>(program_.parameters.size());
    program_.parameters.push_back(b);
    return b;
  }

  // A kernel reading `inputs` (entry parameters in order) and writing one
  // new buffer per shape in `outputs`; returns the output buffers.
  std::vector<uint32_t> Kernel(const std::string& name, const std::string& kind, const std::string& hlo,
                               std::vector<uint32_t> inputs, const std::vector<std::string>& outputs,
                               ProgramTiling tiling = {}) {
    ProgramKernel k;
    k.name = name;
    k.kind = kind;
    k.hlo = hlo;
    k.inputs = std::move(inputs);
    for (const std::string& shape : outputs) k.outputs.push_back(AddBuffer(BufferKind::kTemp, shape));
    k.tiling = std::move(tiling);
    program_.kernels.push_back(k);
    return k.outputs;
  }

  // Finishes with `result` (one array buffer) as the program's result.
  Result<std::unique_ptr<LoadedProgram>> Load(uint32_t result) {
    program_.buffers[result].kind = BufferKind::kOutput;
    program_.result_shape = program_.buffers[result].shape;
    program_.results = {result};
    uint64_t total = 0;
    for (const ProgramBuffer& b : program_.buffers) total += b.size_bytes;
    program_.peak_hbm_bytes = total;
    return LoadedProgram::Load(program_);
  }

 private:
  uint32_t AddBuffer(BufferKind kind, const std::string& shape) {
    ProgramBuffer b;
    b.kind = kind;
    b.shape = shape;
    auto parsed = hlo::ParseShape(shape);
    b.size_bytes = parsed ? static_cast<uint64_t>(std::max<int64_t>(parsed->ByteSize(), 0)) : 0;
    b.offset = next_offset_;
    next_offset_ += b.size_bytes;
    program_.buffers.push_back(b);
    return static_cast<uint32_t>(program_.buffers.size() - 1);
  }

  Program program_;
  uint64_t next_offset_ = 0;
};

// HLO of a one-dot kernel: lhs x rhs -> out with the usual dimension numbers.
inline std::string DotKernel(const std::string& lhs, const std::string& rhs, const std::string& out,
                             const std::string& extra = "") {
  return "HloModule dot\nENTRY e {\n  a = " + lhs + " parameter(0)\n  b = " + rhs +
         " parameter(1)\n  ROOT d = " + out +
         " dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}" + extra + "\n}\n";
}

// A program of one dot kernel; `tiling` as lowering would write it.
inline Result<std::unique_ptr<LoadedProgram>> DotProgram(const std::string& lhs, const std::string& rhs,
                                                         const std::string& out,
                                                         const std::string& extra = "",
                                                         ProgramTiling tiling = {}) {
  ProgramBuilder b;
  uint32_t x = b.Parameter(lhs);
  uint32_t y = b.Parameter(rhs);
  uint32_t d = b.Kernel("dot", "output", DotKernel(lhs, rhs, out, extra), {x, y}, {out}, tiling)[0];
  return b.Load(d);
}

}  // namespace kiln::runtime::timing::testing
