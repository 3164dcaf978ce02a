#include "compiler/autotune/tile_record.h"

#include "compiler/hlo/subgraph_fingerprint.h"

namespace kiln::autotune {
namespace {

std::string Dims(const std::vector<int64_t>& dims) {
  std::string out;
  for (int64_t d : dims) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out.empty() ? "-" : out;
}

std::string Blocks(const std::vector<fusion::BlockShape>& blocks) {
  std::string out;
  for (const fusion::BlockShape& b : blocks) out += (out.empty() ? "" : ",") + Dims(b.dimensions);
  return out.empty() ? "-" : out;
}

}  // namespace

Result<std::string> KernelWorkloadKey(const hlo::Computation& entry, const fusion::Kernel& kernel) {
  Result<hlo::Hash128> key = hlo::FingerprintSubgraph(entry, kernel.instructions, kernel.roots);
  if (!key) return key.error().WithContext("kernel workload key");
  return key->Hex();
}

std::string TileText(const fusion::TileChoice& tile) {
  if (!tile.tiled) return "untiled";
  return "tile grid=" + Dims(tile.grid) + " in=" + Blocks(tile.inputs) + " out=" + Blocks(tile.outputs);
}

}  // namespace kiln::autotune
