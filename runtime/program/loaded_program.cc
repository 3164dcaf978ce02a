#include "runtime/program/loaded_program.h"

#include <string>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "runtime/program/literal_leaves.h"

namespace kiln::runtime {
namespace {

std::string KernelLabel(const Program& p, size_t k) {
  return "kernel " + std::to_string(k) + " (" + p.kernels[k].name + ")";
}

// The shapes a kernel's root produces, one per output buffer.
// A single output is the root itself; several are the root tuple's elements.
std::vector<const hlo::Shape*> ResultElements(const hlo::Shape& root, size_t outputs) {
  std::vector<const hlo::Shape*> out;
  if (outputs == 1) {
    out.push_back(&root);
  } else if (root.IsTuple()) {
    for (const hlo::Shape& element : root.tuple_shapes()) out.push_back(&element);
  }
  return out;
}

Status CheckKernelSignature(const LoadedProgram& lp, size_t k) {
  const Program& p = lp.program();
  const ProgramKernel& kernel = p.kernels[k];
  const hlo::Computation& entry = *lp.kernel_module(k).entry();
  if (entry.parameter_count() != static_cast<int64_t>(kernel.inputs.size())) {
    return DataLossError(KernelLabel(p, k) + ": HLO has " + std::to_string(entry.parameter_count()) +
                         " parameters but the kernel reads " + std::to_string(kernel.inputs.size()) + " buffers");
  }
  for (size_t i = 0; i < kernel.inputs.size(); ++i) {
    const hlo::Shape& want = lp.buffer_shape(kernel.inputs[i]);
    const hlo::Shape& got = entry.parameters()[i]->shape();
    if (!got.Compatible(want)) {
      return DataLossError(KernelLabel(p, k) + ": parameter " + std::to_string(i) + " is " + got.ToString() +
                           " but buffer " + std::to_string(kernel.inputs[i]) + " is " + want.ToString());
    }
  }
  std::vector<const hlo::Shape*> results = ResultElements(entry.root()->shape(), kernel.outputs.size());
  if (results.size() != kernel.outputs.size()) {
    return DataLossError(KernelLabel(p, k) + ": HLO returns " + std::to_string(results.size()) +
                         " values but the kernel writes " + std::to_string(kernel.outputs.size()) + " buffers");
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const hlo::Shape& want = lp.buffer_shape(kernel.outputs[i]);
    if (!results[i]->Compatible(want)) {
      return DataLossError(KernelLabel(p, k) + ": result " + std::to_string(i) + " is " + results[i]->ToString() +
                           " but buffer " + std::to_string(kernel.outputs[i]) + " is " + want.ToString());
    }
  }
  return Ok();
}

}  // namespace

Result<std::unique_ptr<LoadedProgram>> LoadedProgram::Load(Program program) {
  KILN_RETURN_IF_ERROR(VerifyProgram(program));
  std::unique_ptr<LoadedProgram> lp(new LoadedProgram());
  lp->program_ = std::move(program);
  const Program& p = lp->program_;
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    const ProgramBuffer& buf = p.buffers[b];
    auto shape = hlo::ParseShape(buf.shape);
    if (!shape) {
      return DataLossError("buffer " + std::to_string(b) + ": bad shape '" + buf.shape +
                           "': " + shape.error().ToString());
    }
    lp->buffer_shapes_.push_back(std::move(*shape));
    if (buf.kind == BufferKind::kConstant) {
      auto literal = hlo::ParseLiteral(buf.literal);
      if (!literal) {
        return DataLossError("constant buffer " + std::to_string(b) + ": " + literal.error().ToString());
      }
      lp->constants_.push_back(std::make_unique<hlo::Literal>(std::move(*literal)));
    } else {
      lp->constants_.push_back(nullptr);
    }
  }
  auto result_shape = hlo::ParseShape(p.result_shape);
  if (!result_shape) return DataLossError("bad result shape: " + result_shape.error().ToString());
  lp->result_shape_ = std::move(*result_shape);
  std::vector<const hlo::Shape*> leaves = ShapeLeaves(lp->result_shape_);
  if (leaves.size() != p.results.size()) {
    return DataLossError("result shape has " + std::to_string(leaves.size()) + " arrays but " +
                         std::to_string(p.results.size()) + " result buffers are listed");
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!leaves[i]->Compatible(lp->buffer_shapes_[p.results[i]])) {
      return DataLossError("result array " + std::to_string(i) + " is " + leaves[i]->ToString() +
                           " but its buffer is " + lp->buffer_shapes_[p.results[i]].ToString());
    }
  }
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    auto module = hlo::ParseModule(p.kernels[k].hlo, p.kernels[k].name);
    if (!module) return DataLossError(KernelLabel(p, k) + ": " + module.error().ToString());
    if (Status verified = hlo::VerifyModule(**module); !verified) {
      Error corrupt = std::move(verified.error());
      corrupt.code = ErrorCode::kDataLoss;  // a stored kernel that does not verify
      return corrupt;
    }
    lp->modules_.push_back(std::move(*module));
    KILN_RETURN_IF_ERROR(CheckKernelSignature(*lp, k));
  }
  return lp;
}

Result<std::unique_ptr<LoadedProgram>> LoadedProgram::FromBytes(std::span<const uint8_t> bytes) {
  KILN_ASSIGN_OR_RETURN(Program program, ParseProgram(bytes));
  return Load(std::move(program));
}

}  // namespace kiln::runtime
