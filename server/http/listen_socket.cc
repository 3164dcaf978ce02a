#include "server/http/listen_socket.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "server/http/str_cat.h"

namespace kiln::http::internal {
namespace {

std::string AddressText(const sockaddr& address) {
  char host[INET6_ADDRSTRLEN] = {};
  if (address.sa_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
    uv_ip6_name(&in6, host, sizeof(host));
    return StrCat("[", host, "]:", ntohs(in6.sin6_port));
  }
  const auto& in4 = reinterpret_cast<const sockaddr_in&>(address);
  uv_ip4_name(&in4, host, sizeof(host));
  return StrCat(host, ":", ntohs(in4.sin_port));
}

}  // namespace

Result<uv_os_sock_t> BindReusePortSocket(const sockaddr& address) {
  const std::string where = AddressText(address);
  auto fail = [&where](const char* step, int fd) -> Result<uv_os_sock_t> {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    return MakeError(StrCat(step, " ", where, ": ", std::strerror(error)));
  };
  const int fd = ::socket(address.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("socket for", fd);
  const int on = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0) {
    return fail("SO_REUSEADDR on", fd);
  }
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0) {
    return fail("SO_REUSEPORT on", fd);
  }
  const socklen_t length =
      address.sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (::bind(fd, &address, length) != 0) return fail("bind", fd);
  return fd;
}

}  // namespace kiln::http::internal
