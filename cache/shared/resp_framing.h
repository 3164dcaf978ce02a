// The framing of Redis replies (RESP2), checked on the bytes themselves.
//
// Debian's hiredis 0.14 reader skips the two bytes after a bulk string's
// payload without looking at them, so "$3\r\nabcde\r\n" reads as "abc" and
// what follows is taken for the next reply. A connection keeps the bytes it
// fed the reader and checks them with CheckRespFraming before it believes
// the replies: `bytes` must be exactly `count` values, every line ending in
// CRLF, every bulk payload followed by CRLF, lengths and counts decimal,
// nesting at most kMaxRespDepth deep. Errors say what is wrong and at which
// byte. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "base/status.h"

namespace kiln::cache::shared {

inline constexpr int kMaxRespDepth = 7;  // hiredis's own limit

Status CheckRespFraming(std::string_view bytes, size_t count);

// The length of the one value `bytes` starts with, framed as above; nullopt
// while the bytes end before it does (a stream that has not sent it all).
Result<std::optional<size_t>> RespValueLength(std::string_view bytes);

}  // namespace kiln::cache::shared
