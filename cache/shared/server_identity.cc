#include "cache/shared/server_identity.h"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <random>

namespace kiln::cache::shared {

std::string HostName() {
  char host[256] = "?";
  gethostname(host, sizeof(host) - 1);
  host[sizeof(host) - 1] = '\0';
  return host;
}

std::string ProcessName() { return HostName() + ":" + std::to_string(getpid()); }

std::string NewLeaseToken(std::string_view tag) {
  static std::atomic<uint64_t> sequence{0};
  thread_local std::mt19937_64 random(std::random_device{}());
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "%016llx%04llx", static_cast<unsigned long long>(random()),
                static_cast<unsigned long long>(sequence++ & 0xffff));
  return ProcessName() + ":" + std::string(tag) + suffix;
}

}  // namespace kiln::cache::shared
