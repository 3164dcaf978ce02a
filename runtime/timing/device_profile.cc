#include "runtime/timing/device_profile.h"

#include <algorithm>

#include "runtime/chip/chip_spec.h"
#include "runtime/chip/topology.h"

namespace kiln::runtime::timing {

std::string_view BoundName(Bound bound) {
  switch (bound) {
    case Bound::kCompute: return "compute";
    case Bound::kMemory: return "memory";
    case Bound::kOverhead: return "overhead";
    case Bound::kIci: return "ici";
  }
  return "overhead";
}

DeviceProfile AssembleProfile(std::string_view chip, std::vector<KernelProfile> kernels,
                              std::string_view topology, int chips, std::span<const double> starts) {
  DeviceProfile profile;
  profile.chip = std::string(chip);
  const ChipSpec* spec = FindChip(chip);
  profile.topology = !topology.empty() ? std::string(topology)
                     : spec != nullptr ? SingleChip(*spec).ToString()
                                       : "1x1";
  profile.chips = chips;
  const bool placed = starts.size() == kernels.size();
  double peak_seconds = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    KernelProfile& k = kernels[i];
    k.start_seconds = placed ? starts[i] : profile.seconds;
    profile.seconds = std::max(profile.seconds, k.start_seconds + k.seconds);
    profile.flops += k.flops;
    if (spec != nullptr) peak_seconds += k.peak_seconds > 0 ? k.peak_seconds : k.flops / spec->bf16_flops;
    profile.bytes += k.bytes;
    profile.ideal_bytes += k.ideal_bytes;
  }
  profile.kernels = std::move(kernels);
  if (spec != nullptr && profile.seconds > 0) profile.hfu = peak_seconds / profile.seconds;
  return profile;
}

}  // namespace kiln::runtime::timing
