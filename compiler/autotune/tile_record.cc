#include "compiler/autotune/tile_record.h"

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/parser.h"

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

Result<std::string> KernelWorkloadKey(std::string_view kernel_hlo, std::string_view chip) {
  auto module = hlo::ParseModule(kernel_hlo);
  if (!module) return module.error().WithContext("kernel workload key");
  hlo::FingerprintOptions options;
  options.chip = std::string(chip);
  options.compile_options = "autotune-kernel";
  KILN_ASSIGN_OR_RETURN(hlo::Fingerprint fingerprint, hlo::FingerprintModule(**module, options));
  return "autotune-kernel/" + fingerprint.key.Hex();
}

std::string TileText(const fusion::TileChoice& tile) {
  if (!tile.tiled) return "untiled";
  return "tile grid=" + Dims(tile.grid) + " in=" + Blocks(tile.inputs) + " out=" + Blocks(tile.outputs);
}

}  // namespace kiln::autotune
