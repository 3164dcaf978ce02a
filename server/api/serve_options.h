// The settings of `kiln serve`, from flags and the environment.
//
// Every flag has an environment variable (KILN_LISTEN, KILN_DB, KILN_POOL,
// KILN_COMPILE_THREADS, KILN_MAX_BODY, KILN_MAX_BYTES, KILN_AUTH_FILE,
// KILN_LOOPS, KILN_ACCESS_LOG, KILN_MAX_CONNECTIONS, KILN_EXECUTE_TIMEOUT,
// KILN_HOST_MEMORY, KILN_SHUTDOWN_GRACE, KILN_TUNE_IN_BACKGROUND,
// KILN_SHARED, KILN_SHARED_TTL, KILN_SHARED_LEASE, KILN_SHARED_TIMEOUT); a
// flag given on the command line wins over its variable. Sizes accept a
// plain byte count or a binary/decimal suffix ("256MiB", "1G", "64k").
// Errors name the flag or variable and the value. Pure functions (apart
// from reading the environment); thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/units.h"
#include "cache/cache_store.h"

namespace kiln::api {

struct ListenAddress {
  std::string host = "127.0.0.1";
  uint16_t port = 8470;  // 0: an ephemeral port
};

struct ServeOptions {
  ListenAddress listen;
  std::string db_path = std::string(cache::kDefaultStorePath);
  std::string pool = "v5e:4";
  int compile_threads = 2;
  uint64_t max_body_bytes = uint64_t{256} << 20;
  uint64_t max_store_bytes = 0;  // 0: unlimited
  std::string auth_file;         // empty: authentication off
  int http_threads = 4;
  int request_timeout_ms = 30'000;
  size_t pool_queue_capacity = 64;  // runs waiting per server (1..kMaxPoolQueue); beyond: 503
  int loops = 0;                    // HTTP loop threads; 0: one per core
  bool access_log = true;           // one stderr line per request
  uint64_t max_connections = 0;     // client connections; 0: DefaultMaxConnections
  // The longest an execute may take, queued and running; a request may ask
  // for less (?timeout=, X-Kiln-Timeout).
  std::chrono::milliseconds execute_timeout{60'000};
  // Host memory all runs together may hold; "50%" of RAM by default.
  std::string host_memory = "50%";
  // SIGTERM/SIGINT: in-flight requests get this long; runs still going
  // near its end are stopped so their answers go out before it ends.
  std::chrono::milliseconds shutdown_grace{10'000};
  // Every compile miss is queued for this much autotuning once answered
  // (--tune-in-background); 0: off.
  std::chrono::milliseconds tune_in_background{0};
  // The shared tier (--shared URL, cache/shared/redis_url.h); empty: none.
  std::string shared_url;
  // How long an entry lives in Redis (--shared-ttl; 0: until Redis's
  // maxmemory policy evicts it), how long a compile lease lasts unrenewed
  // (--shared-lease), and the deadline of one Redis exchange
  // (--shared-timeout).
  std::chrono::milliseconds shared_ttl{std::chrono::hours(24 * 7)};
  std::chrono::milliseconds shared_lease{15'000};
  std::chrono::milliseconds shared_timeout{2'000};
  // A file holding the fleet's key for the MAC on shared values
  // (--shared-key-file, cache/shared/value_mac.h); empty: none.
  std::string shared_key_file;
};

// "127.0.0.1:8470", "[::1]:8470", ":8470" (loopback), "8470".
Result<ListenAddress> ParseListenAddress(std::string_view text);

// The largest --max-connections (KILN_MAX_CONNECTIONS) accepted.
inline constexpr uint64_t kMaxConnectionsLimit = uint64_t{1} << 24;
// The most runs --pool-queue lets wait for a chip: each waiting run holds
// its request and inputs in memory.
inline constexpr size_t kMaxPoolQueue = 100000;

// The connection cap for a process allowed `open_files_limit` descriptors
// (RLIMIT_NOFILE's soft limit; 0 or more than 2^20 counts as 2^20) serving
// with `loops` loop threads: the limit less what the rest of kiln holds
// (standard streams, the store's database, journal and temporary files, each
// loop's epoll, wakeup and listening descriptors, the signal pipes) with room
// to spare, and never less than a quarter of the limit.
uint64_t DefaultMaxConnections(uint64_t open_files_limit, int loops);

// An entry's life in the shared tier: "0" or "none" (no expiry), "7d"
// (days, at most 365), or a ParseDuration text.
Result<std::chrono::milliseconds> ParseSharedTtl(std::string_view text);
// --shared-lease: a ParseDuration text from kMinSharedLease to
// kMaxSharedLease (a shorter lease would lapse between renewals on a busy
// host; a longer one holds a fleet's compile long after its holder died).
inline constexpr std::chrono::milliseconds kMinSharedLease{1'000};
inline constexpr std::chrono::milliseconds kMaxSharedLease{600'000};
Result<std::chrono::milliseconds> ParseSharedLease(std::string_view text);
// --max-bytes: a ParseByteSize text; 0 is no budget. A budget under
// kMinStoreBudget (a unit left out: "--max-bytes 10" is ten bytes) is
// refused, saying so, rather than evicting every entry it stores.
inline constexpr uint64_t kMinStoreBudget = uint64_t{1} << 20;
Result<uint64_t> ParseStoreBudget(std::string_view text);
// The host-memory budget: a size ("8GiB", as ParseByteSize) or a share of
// physical memory ("50%"); "0" turns the budget off. `physical_bytes` is the
// machine's RAM (PhysicalMemoryBytes()).
Result<uint64_t> ParseHostMemory(std::string_view text, uint64_t physical_bytes);
// The machine's RAM (sysconf); 0 when unknown.
uint64_t PhysicalMemoryBytes();

// Values from the environment for the settings whose flag was not given.
// `flag_given("--db")` says whether the command line set that flag;
// `getenv` reads a variable (nullptr when unset; defaults to ::getenv).
Status ApplyEnvironment(ServeOptions& options, const std::function<bool(std::string_view)>& flag_given,
                        const std::function<const char*(const char*)>& getenv = nullptr);

}  // namespace kiln::api
