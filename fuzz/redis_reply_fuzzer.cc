// libFuzzer harness: a hostile or corrupted Redis answering the shared
// tier (cache/shared): the input is every byte the "server" sends back, over
// a real socket, to a pipeline of the commands a compile's look into Redis
// sends (EXISTS, GET), each string reply then going through what checks a
// fetched entry (DecodeBundle with the runtime's program verifier); and the
// same bytes as the messages of a subscription (Receive).
//
// Contract checked beyond "no crash, no hang" (fuzz/redis_reply_replay.h,
// which the unit tests replay the kept findings with): a pipeline of two
// commands either fails or returns exactly two replies, and only when the
// bytes are two values framed as resp_framing.h checks (a bulk string
// without its CRLF, which hiredis 0.14 reads, is refused); a subscription
// answers framed values only.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "fuzz/redis_reply_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (64 << 10)) return 0;  // stays within one socket buffer
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (std::optional<std::string> broken = kiln::fuzz::ReplayRedisReply(input)) {
    kiln::fuzz::FailCheck("redis reply contract", *broken);
  }
  return 0;
}
