#include "server/http/listen_socket.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include "server/http/port_holder.h"
#include "base/str_cat.h"

namespace kiln::http::internal {
namespace {

uint16_t PortOf(const sockaddr& address) {
  if (address.sa_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
}

std::string AddressText(const sockaddr& address) {
  char host[INET6_ADDRSTRLEN] = {};
  if (address.sa_family == AF_INET6) {
    uv_ip6_name(&reinterpret_cast<const sockaddr_in6&>(address), host, sizeof(host));
    return StrCat("[", host, "]:", PortOf(address));
  }
  uv_ip4_name(&reinterpret_cast<const sockaddr_in&>(address), host, sizeof(host));
  return StrCat(host, ":", PortOf(address));
}

Error InUse(const sockaddr& address) {
  std::string message = StrCat(AddressText(address), " is already in use");
  if (std::optional<std::string> holder = DescribePortHolder(PortOf(address))) {
    message += StrCat(": ", *holder, " listens on port ", PortOf(address));
  }
  return UnavailableError(std::move(message));
}

}  // namespace

Result<sockaddr_storage> ResolveListenAddress(const std::string& host, uint16_t port) {
  sockaddr_storage address{};
  int rc = host.find(':') != std::string::npos
               ? uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(&address))
               : uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(&address));
  if (rc != 0) {
    return InvalidArgumentError(
        StrCat("listen address \"", host, "\" is not a numeric IPv4 or IPv6 address: ", uv_strerror(rc)));
  }
  return address;
}

Result<uv_os_sock_t> BindListenSocket(const sockaddr& address, ListenRole role) {
  const std::string where = AddressText(address);
  auto fail = [&where](const char* step, int fd) -> Result<uv_os_sock_t> {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    return ErrnoError(error, StrCat(step, " ", where, ": ", std::strerror(error)));
  };
  const int fd = ::socket(address.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("socket for", fd);
  const int on = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0) {
    return fail("SO_REUSEADDR on", fd);
  }
  if (role == ListenRole::kMember &&
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0) {
    return fail("SO_REUSEPORT on", fd);
  }
  const socklen_t length =
      address.sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (::bind(fd, &address, length) != 0) {
    if (errno != EADDRINUSE) return fail("bind", fd);
    ::close(fd);
    return std::unexpected(InUse(address));
  }
  if (role == ListenRole::kFirstOfGroup &&
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0) {
    return fail("SO_REUSEPORT on", fd);
  }
  return fd;
}

}  // namespace kiln::http::internal
