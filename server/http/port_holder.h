// Internal to kiln_http: which process listens on a TCP port, for the error
// a server gives when its address is taken.
//
// Best effort and Linux only: the listening sockets come from /proc/net/tcp
// and /proc/net/tcp6 and their owners from the /proc/PID/fd links this user
// may read. Pure apart from reading /proc; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::http::internal {

// "pid 1234 (kiln serve --listen 127.0.0.1:8470)" for a process that listens
// on `port` (any address), "a process of another user" when the socket is
// there but its owner cannot be seen, or nullopt when nothing listens.
std::optional<std::string> DescribePortHolder(uint16_t port);

}  // namespace kiln::http::internal
