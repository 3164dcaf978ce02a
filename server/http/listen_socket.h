// Internal to kiln_http: the listening sockets of a server's loops.
//
// A server with one loop binds one socket. A server with several binds one
// per loop to the same address with SO_REUSEPORT, and the kernel spreads new
// connections over them. SO_REUSEPORT would equally let another process of
// the same user bind the address and take half the connections, so the
// first socket is bound without it: the bind fails when anything else
// listens there, and only then is SO_REUSEPORT turned on for the loops that
// follow (Linux checks the option of the sockets already bound when the
// next one binds, so members may join after the first is bound). Another
// kiln, binding its own first socket the same way, is refused.
//
// libuv 1.44 has no SO_REUSEPORT flag for uv_tcp_bind, so the sockets are
// made with socket()/setsockopt()/bind() and handed to uv_tcp_open. Pure
// functions; thread-safe.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>

#include "base/status.h"

namespace kiln::http::internal {

enum class ListenRole {
  kAlone,         // the only socket on the address
  kFirstOfGroup,  // bound as kAlone, then open to kMember sockets
  kMember,        // joins the address a kFirstOfGroup socket holds
};

// `host` (a numeric IPv4 or IPv6 address) and `port` as a socket address.
Result<sockaddr_storage> ResolveListenAddress(const std::string& host, uint16_t port);

// A non-blocking, close-on-exec TCP socket with SO_REUSEADDR bound to
// `address` as `role` says (not yet listening). The caller owns the
// descriptor. Fails naming the address and the system error; when the
// address is in use, also the process that listens there if /proc says.
Result<uv_os_sock_t> BindListenSocket(const sockaddr& address, ListenRole role);

}  // namespace kiln::http::internal
