#include "runtime/chip/memory_tiles.h"

namespace kiln::runtime {

int64_t SublaneTile(hlo::PrimitiveType type) {
  int bits = hlo::BitWidth(type);
  if (bits >= 32) return kVectorSublanes;
  if (bits == 16) return 16;
  return 32;
}

}  // namespace kiln::runtime
