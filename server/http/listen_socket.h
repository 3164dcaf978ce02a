// Internal to kiln_http: a listening socket several loops can share a port with.
//
// libuv 1.44 has no SO_REUSEPORT flag for uv_tcp_bind, so the socket is made
// here with socket()/setsockopt()/bind() and handed to uv_tcp_open. Pure
// function; thread-safe.
#pragma once

#include <uv.h>

#include "compiler/hlo/status.h"

namespace kiln::http::internal {

// A non-blocking, close-on-exec TCP socket with SO_REUSEADDR and
// SO_REUSEPORT, bound to `address` (not yet listening). The caller owns the
// descriptor. Fails naming the address and the system error.
Result<uv_os_sock_t> BindReusePortSocket(const sockaddr& address);

}  // namespace kiln::http::internal
