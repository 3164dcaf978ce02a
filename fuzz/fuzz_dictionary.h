// The zstd dictionary store_blob_fuzzer decodes with and kiln_fuzz_seeds
// compresses its seed frames with: trained on the same synthetic samples
// every time, so both sides agree without a file. Header-only; fuzz/ only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cache/zstd_codec.h"

namespace kiln::fuzz {

inline std::shared_ptr<const cache::ZstdDictionary> TrainedFuzzDictionary() {
  std::vector<std::string> samples;
  for (int i = 0; i < 400; ++i) {
    std::string n = std::to_string(i);
    samples.push_back("KILNEXE HloModule kernel_" + n + ", entry_computation_layout={(f32[" + n +
                      ",128]{1,0})->f32[" + n + ",128]{1,0}}\n\nENTRY %main.k" + n +
                      " {\n  %p0 = f32[" + n + ",128]{1,0} parameter(0)\n  ROOT %n = f32[" + n +
                      ",128]{1,0} negate(%p0)\n}\nloop v5e heuristic {\"plan\":\"heuristic\"}");
  }
  auto trained = cache::TrainZstdDictionary(samples, 4096);
  if (!trained) return nullptr;
  auto dictionary = cache::ZstdDictionary::Create(*trained, cache::kDefaultZstdLevel);
  return dictionary ? *dictionary : nullptr;
}

}  // namespace kiln::fuzz
