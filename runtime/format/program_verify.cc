// VerifyProgram: the structural checks every Program passes before it runs.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/format/program.h"

namespace kiln::runtime {
namespace {

std::string KernelLabel(const Program& p, size_t k) {
  return "kernel " + std::to_string(k) + " (" + p.kernels[k].name + ")";
}

}  // namespace

Result<int64_t> ProgramChipCount(const Program& p) {
  if (p.topology.empty()) {
    if (p.replica_count != 1) return DataLossError("a one-chip program names " + std::to_string(p.replica_count) + " replicas");
    return 1;
  }
  int64_t chips = 1;
  size_t start = 0;
  while (start <= p.topology.size()) {
    const size_t x = std::min(p.topology.find('x', start), p.topology.size());
    const std::string_view axis = std::string_view(p.topology).substr(start, x - start);
    int64_t size = 0;
    bool digits = !axis.empty() && axis.size() <= 5;
    for (char c : axis) {
      digits = digits && c >= '0' && c <= '9';
      size = size * 10 + (c - '0');
    }
    if (!digits || size < 1) return DataLossError("topology '" + p.topology + "' is not AxB[xC] positive sizes");
    chips *= size;
    if (chips > kMaxProgramChips) {
      return DataLossError("topology '" + p.topology + "' has more than " + std::to_string(kMaxProgramChips) + " chips");
    }
    start = x + 1;
  }
  if (p.replica_count < 1 || chips % p.replica_count != 0) {
    return DataLossError("topology '" + p.topology + "' does not split into " + std::to_string(p.replica_count) +
                         " replicas");
  }
  return chips;
}

Status VerifyProgram(const Program& p) {
  KILN_RETURN_IF_ERROR(ProgramChipCount(p));
  const bool global = !p.global_parameter_shapes.empty() || !p.parameter_shardings.empty() ||
                      !p.global_result_shape.empty() || !p.result_sharding.empty();
  if (global && (p.topology.empty() || p.global_parameter_shapes.size() != p.parameter_shardings.size() ||
                 p.global_result_shape.empty() || p.result_sharding.empty())) {
    return DataLossError("the global signature of a partitioned program is incomplete (" +
                         std::to_string(p.global_parameter_shapes.size()) + " shapes, " +
                         std::to_string(p.parameter_shardings.size()) + " shardings, topology '" + p.topology + "')");
  }
  const size_t n = p.buffers.size();
  std::vector<bool> written(n, false);
  for (size_t i = 0; i < n; ++i) {
    const ProgramBuffer& buf = p.buffers[i];
    if (static_cast<uint8_t>(buf.kind) > static_cast<uint8_t>(BufferKind::kConstant)) {
      return DataLossError("buffer " + std::to_string(i) + " has an unknown kind");
    }
    if (buf.kind == BufferKind::kConstant) {
      if (buf.literal.empty()) return DataLossError("constant buffer " + std::to_string(i) + " has no value");
      written[i] = true;
    }
  }
  for (size_t i = 0; i < p.parameters.size(); ++i) {
    uint32_t b = p.parameters[i];
    if (b >= n)
      return DataLossError("parameter array " + std::to_string(i) + " names buffer " + std::to_string(b) + " of " +
                           std::to_string(n));
    if (p.buffers[b].kind != BufferKind::kParameter || p.buffers[b].parameter_number < 0) {
      return DataLossError("parameter array " + std::to_string(i) + " maps to buffer " + std::to_string(b) +
                           ", which is not a parameter buffer");
    }
    if (written[b]) return DataLossError("buffer " + std::to_string(b) + " is bound to two parameter arrays");
    written[b] = true;
  }
  for (size_t i = 0; i < n; ++i) {
    if (p.buffers[i].kind == BufferKind::kParameter && !written[i]) {
      return DataLossError("parameter buffer " + std::to_string(i) + " is not in the parameter list");
    }
  }
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const ProgramKernel& kernel = p.kernels[k];
    if (kernel.hlo.empty()) return DataLossError(KernelLabel(p, k) + " has no HLO");
    for (uint32_t b : kernel.inputs) {
      if (b >= n)
        return DataLossError(KernelLabel(p, k) + " reads buffer " + std::to_string(b) + " of " + std::to_string(n));
      if (!written[b])
        return DataLossError(KernelLabel(p, k) + " reads buffer " + std::to_string(b) + " before any kernel writes it");
    }
    for (uint32_t b : kernel.outputs) {
      if (b >= n)
        return DataLossError(KernelLabel(p, k) + " writes buffer " + std::to_string(b) + " of " + std::to_string(n));
      if (written[b])
        return DataLossError(KernelLabel(p, k) + " writes buffer " + std::to_string(b) +
                             ", which already holds a value");
      written[b] = true;
    }
  }
  if (p.result_shape.empty()) return DataLossError("executable has no result shape");
  for (uint32_t b : p.results) {
    if (b >= n) return DataLossError("result names buffer " + std::to_string(b) + " of " + std::to_string(n));
    if (!written[b]) return DataLossError("result buffer " + std::to_string(b) + " is never written");
  }
  return Ok();
}

}  // namespace kiln::runtime
