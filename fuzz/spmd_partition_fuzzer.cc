// libFuzzer harness: the SPMD partitioner as POST /v1/compile?topology=...
// runs it on a module from the network (parse, verify, then partition for
// the device count the module's annotations name), plus its contract that
// a partitioned module is a valid per-device program: it verifies and says
// it is partitioned.
//
// Any input ends in a per-device module or an error; a crash, a hang, a
// leak or a partitioned module that fails the verifier is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "compiler/hlo/sharding.h"
#include "compiler/spmd/spmd_partitioner.h"
#include "fuzz/fuzz_check.h"

namespace {

// Slices larger than this are not partitioned here (the server's topologies
// are bounded by the pod sizes; this keeps each input fast).
constexpr int64_t kMaxDevices = 64;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // The sharding grammar alone, on the raw bytes.
  (void)hlo::ParseSharding(text);
  auto module = hlo::ParseModule(text, "fuzz.hlo");
  if (!module || !hlo::VerifyModule(**module)) return 0;
  if (!spmd::NeedsPartitioning(**module)) return 0;
  const int64_t devices = spmd::ModuleDeviceCount(**module);
  if (devices < 1 || devices > kMaxDevices) return 0;
  auto partitioned = spmd::PartitionModule(**module, devices);
  if (!partitioned) return 0;
  if (Status verified = hlo::VerifyModule(**partitioned); !verified) {
    fuzz::FailCheck("a partitioned module fails the verifier",
                    verified.error().message + "\n" + hlo::PrintModule(**partitioned));
  }
  if (!spmd::IsPartitioned(**partitioned)) {
    fuzz::FailCheck("a partitioned module does not say it is partitioned", hlo::PrintModule(**partitioned));
  }
  return 0;
}
