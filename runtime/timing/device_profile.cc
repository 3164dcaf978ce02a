#include "runtime/timing/device_profile.h"

#include "runtime/chip/chip_spec.h"

namespace kiln::runtime::timing {

std::string_view BoundName(Bound bound) {
  switch (bound) {
    case Bound::kCompute: return "compute";
    case Bound::kMemory: return "memory";
    case Bound::kOverhead: return "overhead";
  }
  return "overhead";
}

DeviceProfile AssembleProfile(std::string_view chip, std::vector<KernelProfile> kernels) {
  DeviceProfile profile;
  profile.chip = std::string(chip);
  for (KernelProfile& k : kernels) {
    k.start_seconds = profile.seconds;
    profile.seconds += k.seconds;
    profile.flops += k.flops;
    profile.bytes += k.bytes;
    profile.ideal_bytes += k.ideal_bytes;
  }
  profile.kernels = std::move(kernels);
  const ChipSpec* spec = FindChip(chip);
  if (spec != nullptr && profile.seconds > 0) {
    profile.hfu = profile.flops / (profile.seconds * spec->bf16_flops * profile.chips);
  }
  return profile;
}

}  // namespace kiln::runtime::timing
