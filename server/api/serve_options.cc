#include "server/api/serve_options.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>

namespace kiln::api {

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  ListenAddress address;
  std::string_view port = text;
  if (size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    std::string_view host = text.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (!host.empty()) address.host = std::string(host);
    port = text.substr(colon + 1);
  }
  auto number = ParseUnsigned(port, 65535, "listen address '" + std::string(text) + "' port");
  if (!number) return std::unexpected(number.error());
  address.port = static_cast<uint16_t>(*number);
  return address;
}

uint64_t DefaultMaxConnections(uint64_t open_files_limit, int loops) {
  constexpr uint64_t kMostDescriptors = uint64_t{1} << 20;
  constexpr uint64_t kReserved = 128;       // all but the loops, with room to spare
  constexpr uint64_t kReservedPerLoop = 8;  // epoll, wakeups, listener and its duplicate
  const uint64_t limit =
      open_files_limit == 0 || open_files_limit > kMostDescriptors ? kMostDescriptors : open_files_limit;
  const uint64_t reserve = kReserved + kReservedPerLoop * static_cast<uint64_t>(std::max(loops, 1));
  return limit - std::min(reserve, limit - limit / 4);
}

Result<std::chrono::milliseconds> ParseSharedTtl(std::string_view text) {
  auto refuse = [&] {
    return InvalidArgumentError("shared ttl '" + std::string(text) +
                                "': expected 1d to 365d, a time up to 24h such as 12h or 90m, or 0 for none");
  };
  if (text == "0" || EqualsIgnoreCase(text, "none")) return std::chrono::milliseconds(0);
  if (text.size() > 1 && (text.back() == 'd' || text.back() == 'D')) {
    auto days = ParseUnsigned(text.substr(0, text.size() - 1), 365, "shared ttl '" + std::string(text) + "'");
    if (!days || *days == 0) return refuse();
    return std::chrono::milliseconds(std::chrono::hours(24) * static_cast<int64_t>(*days));
  }
  Result<std::chrono::milliseconds> duration = ParseDuration(text);
  if (!duration) return refuse();
  return duration;
}

Result<uint64_t> ParseStoreBudget(std::string_view text) {
  KILN_ASSIGN_OR_RETURN(uint64_t bytes, ParseByteSize(text));
  if (bytes != 0 && bytes < kMinStoreBudget) {
    return InvalidArgumentError("store budget '" + std::string(text) + "' is " + std::to_string(bytes) +
                                " bytes, too small to hold an executable; give a unit, e.g. 20GiB or 512MiB "
                                "(0 = no budget)");
  }
  return bytes;
}

Result<std::chrono::milliseconds> ParseSharedLease(std::string_view text) {
  Result<std::chrono::milliseconds> lease = ParseDuration(text);
  if (!lease || *lease < kMinSharedLease || *lease > kMaxSharedLease) {
    return InvalidArgumentError("shared lease '" + std::string(text) +
                                "': expected a time from 1s to 10m such as 15s (a holder renews it every third of it)");
  }
  return lease;
}

Result<uint64_t> ParseHostMemory(std::string_view text, uint64_t physical_bytes) {
  if (!text.empty() && text.back() == '%') {
    auto percent = ParseUnsigned(text.substr(0, text.size() - 1), 100, "host memory '" + std::string(text) + "'");
    if (!percent) return std::unexpected(percent.error());
    if (physical_bytes == 0) {
      return InvalidArgumentError("host memory '" + std::string(text) + "': the machine's RAM is unknown; give a size");
    }
    return static_cast<uint64_t>(static_cast<unsigned __int128>(physical_bytes) * *percent / 100);
  }
  return ParseByteSize(text);
}

uint64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

Status ApplyEnvironment(ServeOptions& options, const std::function<bool(std::string_view)>& flag_given,
                        const std::function<const char*(const char*)>& getenv) {
  auto read = [&](const char* name) -> const char* {
    const char* value = getenv ? getenv(name) : std::getenv(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
  };
  auto wrap = [](const char* name, Error error) -> Error {
    return std::move(error).WithContext(std::string("environment variable ") + name);
  };
  if (const char* v = read("KILN_LISTEN"); v && !flag_given("--listen")) {
    auto address = ParseListenAddress(v);
    if (!address) return wrap("KILN_LISTEN", address.error());
    options.listen = *address;
  }
  if (const char* v = read("KILN_DB"); v && !flag_given("--db")) options.db_path = v;
  if (const char* v = read("KILN_POOL"); v && !flag_given("--pool")) options.pool = v;
  if (const char* v = read("KILN_AUTH_FILE"); v && !flag_given("--auth-file")) options.auth_file = v;
  if (const char* v = read("KILN_COMPILE_THREADS"); v && !flag_given("--compile-threads")) {
    auto threads = ParseUnsigned(v, 256, "thread count");
    if (!threads || *threads == 0) {
      return InvalidArgumentError(std::string("environment variable KILN_COMPILE_THREADS: expected 1 to 256, got '") +
                                  v + "'");
    }
    options.compile_threads = static_cast<int>(*threads);
  }
  if (const char* v = read("KILN_LOOPS"); v && !flag_given("--loops")) {
    auto loops = ParseUnsigned(v, 256, "loop count");
    if (!loops)
      return InvalidArgumentError(
          std::string("environment variable KILN_LOOPS: expected 0 (one per core) to 256, got '") + v + "'");
    options.loops = static_cast<int>(*loops);
  }
  if (const char* v = read("KILN_ACCESS_LOG"); v && !flag_given("--access-log")) {
    if (EqualsIgnoreCase(v, "on")) {
      options.access_log = true;
    } else if (EqualsIgnoreCase(v, "off")) {
      options.access_log = false;
    } else {
      return InvalidArgumentError(std::string("environment variable KILN_ACCESS_LOG: expected on or off, got '") + v +
                                  "'");
    }
  }
  if (const char* v = read("KILN_MAX_CONNECTIONS"); v && !flag_given("--max-connections")) {
    auto connections = ParseUnsigned(v, kMaxConnectionsLimit, "connection count");
    if (!connections) return wrap("KILN_MAX_CONNECTIONS", connections.error());
    options.max_connections = *connections;
  }
  if (const char* v = read("KILN_POOL_QUEUE"); v && !flag_given("--pool-queue")) {
    auto queue = ParseUnsigned(v, kMaxPoolQueue, "queue length");
    if (!queue || *queue == 0) {
      return InvalidArgumentError(std::string("environment variable KILN_POOL_QUEUE: expected 1 to ") +
                                  std::to_string(kMaxPoolQueue) + ", got '" + v + "'");
    }
    options.pool_queue_capacity = *queue;
  }
  if (const char* v = read("KILN_MAX_BODY"); v && !flag_given("--max-body")) {
    auto bytes = ParseByteSize(v);
    if (!bytes) return wrap("KILN_MAX_BODY", bytes.error());
    options.max_body_bytes = *bytes;
  }
  if (const char* v = read("KILN_EXECUTE_TIMEOUT"); v && !flag_given("--execute-timeout")) {
    auto timeout = ParseDuration(v);
    if (!timeout) return wrap("KILN_EXECUTE_TIMEOUT", timeout.error());
    options.execute_timeout = *timeout;
  }
  if (const char* v = read("KILN_SHUTDOWN_GRACE"); v && !flag_given("--shutdown-grace")) {
    auto grace = ParseDuration(v);
    if (!grace) return wrap("KILN_SHUTDOWN_GRACE", grace.error());
    options.shutdown_grace = *grace;
  }
  if (const char* v = read("KILN_TUNE_IN_BACKGROUND"); v && !flag_given("--tune-in-background")) {
    auto budget = ParseDuration(v);
    if (!budget) return wrap("KILN_TUNE_IN_BACKGROUND", budget.error());
    options.tune_in_background = *budget;
  }
  if (const char* v = read("KILN_SHARED"); v && !flag_given("--shared")) options.shared_url = v;
  if (const char* v = read("KILN_SHARED_TTL"); v && !flag_given("--shared-ttl")) {
    auto ttl = ParseSharedTtl(v);
    if (!ttl) return wrap("KILN_SHARED_TTL", ttl.error());
    options.shared_ttl = *ttl;
  }
  if (const char* v = read("KILN_SHARED_LEASE"); v && !flag_given("--shared-lease")) {
    auto lease = ParseSharedLease(v);
    if (!lease) return wrap("KILN_SHARED_LEASE", lease.error());
    options.shared_lease = *lease;
  }
  if (const char* v = read("KILN_SHARED_TIMEOUT"); v && !flag_given("--shared-timeout")) {
    auto timeout = ParseDuration(v);
    if (!timeout) return wrap("KILN_SHARED_TIMEOUT", timeout.error());
    options.shared_timeout = *timeout;
  }
  if (const char* v = read("KILN_SHARED_KEY_FILE"); v && !flag_given("--shared-key-file")) options.shared_key_file = v;
  if (const char* v = read("KILN_HOST_MEMORY"); v && !flag_given("--host-memory")) {
    auto budget = ParseHostMemory(v, PhysicalMemoryBytes());
    if (!budget) return wrap("KILN_HOST_MEMORY", budget.error());
    options.host_memory = v;
  }
  if (const char* v = read("KILN_MAX_BYTES"); v && !flag_given("--max-bytes")) {
    auto bytes = ParseStoreBudget(v);
    if (!bytes) return wrap("KILN_MAX_BYTES", bytes.error());
    options.max_store_bytes = *bytes;
  }
  return Ok();
}

}  // namespace kiln::api
