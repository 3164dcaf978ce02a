// libFuzzer harness: executable bytes as the execute route loads them from
// the store (service::LoadReadyProgram: envelope, FlatBuffers verification,
// VerifyProgram, kernel HLO parsed and checked against the buffer table,
// constants, parameter shapes, the timing model's fixed prices).
//
// Input: a mode byte, then bytes. Mode odd: the bytes are the executable
// as is (the envelope's magic, length and checksum are fuzzed). Mode even:
// the bytes are the FlatBuffer payload, wrapped in a valid envelope first,
// so mutations get past the checksum into the decoder and the verifiers.
// Either way the bytes are copied to their own allocation first, aligned
// as every executable kiln reads is (a string or vector from SQLite, the
// network or a file): FlatBuffers reads its tables in place.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/format/executable_envelope.h"
#include "runtime/format/program.h"
#include "server/service/program_cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln;
  if (size == 0) return 0;
  const bool raw = (data[0] & 1) != 0;
  std::span<const uint8_t> input(data + 1, size - 1);
  std::vector<uint8_t> bytes = raw ? std::vector<uint8_t>(input.begin(), input.end())
                                   : runtime::WrapInEnvelope(runtime::kExecutableFormatVersion, input);
  (void)service::LoadReadyProgram(bytes);
  return 0;
}
