#include "compiler/autotune/progress_runner.h"

namespace kiln::autotune {

Result<Measurement> ProgressRunner::Measure(std::span<const uint8_t> executable, bool strict_tiling) {
  Result<Measurement> m = inner_.Measure(executable, strict_tiling);
  if (!strict_tiling) {
    if (m && m->ok() && progress_.heuristic_us.load() < 0) {
      progress_.heuristic_us = m->device_us;
      progress_.best_us = m->device_us;
    }
    return m;
  }
  progress_.trials.fetch_add(1);
  if (m && m->ok() && (progress_.best_us.load() < 0 || m->device_us < progress_.best_us.load())) {
    progress_.best_us = m->device_us;
  }
  return m;
}

}  // namespace kiln::autotune
