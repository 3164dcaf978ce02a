// What both StableHLO harnesses check of a read module: it converts or
// fails cleanly, and a converted module that verifies has a key. Returns
// the verified module (null otherwise). Header-only; fuzz/ only.
#pragma once

#include <memory>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/verifier.h"
#include "compiler/stablehlo/convert.h"
#include "fuzz/fuzz_check.h"

namespace kiln::fuzz {

inline std::unique_ptr<hlo::Module> ConvertedAndKeyed(const stablehlo::MlirModule& mlir, hlo::Hash128* key) {
  auto module = stablehlo::ConvertToHlo(mlir);
  if (!module || !hlo::VerifyModule(**module)) return nullptr;
  auto fingerprint = hlo::FingerprintModule(**module, {});
  if (!fingerprint) FailCheck("a converted module has no fingerprint", fingerprint.error().message);
  if (key != nullptr) *key = fingerprint->key;
  return std::move(*module);
}

}  // namespace kiln::fuzz
