// kiln serve [--listen 127.0.0.1:8470] [--db ./kiln.db] [--pool v5e:4]
//            [--compile-threads N] [--max-body 256MiB] [--max-bytes N]
//            [--auth-file F] [--loops N] [--access-log on|off]
//            [--max-connections N] [--execute-timeout 60s]
//            [--host-memory 50%] [--shutdown-grace 10s]
//            [--tune-in-background BUDGET]
//            [--shared URL] [--shared-ttl 7d] [--shared-lease 15s]
//            [--shared-timeout 2s]
//            [--print-routes] [--hash-token TOKEN]
//
// Serves the HTTP API (schema/openapi.yaml) until SIGTERM or SIGINT, then
// stops accepting, lets in-flight requests finish within the grace period
// (runs still going near its end are stopped and answer 503) and closes the
// database. Each flag can also come from the environment (KILN_LISTEN,
// KILN_DB, KILN_POOL, KILN_COMPILE_THREADS, KILN_MAX_BODY, KILN_MAX_BYTES,
// KILN_AUTH_FILE, KILN_LOOPS, KILN_ACCESS_LOG, KILN_MAX_CONNECTIONS, KILN_POOL_QUEUE,
// KILN_EXECUTE_TIMEOUT, KILN_HOST_MEMORY, KILN_SHUTDOWN_GRACE,
// KILN_TUNE_IN_BACKGROUND, KILN_SHARED, KILN_SHARED_TTL, KILN_SHARED_LEASE,
// KILN_SHARED_TIMEOUT); flags win. Redis credentials may come from
// KILN_SHARED_USER / KILN_SHARED_PASSWORD, and for rediss:// a CA and a
// client certificate from KILN_SHARED_TLS_CA, KILN_SHARED_TLS_CERT and
// KILN_SHARED_TLS_KEY; --shared-key-file (KILN_SHARED_KEY_FILE) signs and
// checks every shared value (cache/shared/value_mac.h).
// `--listen 127.0.0.1:0` takes an ephemeral port; the start line names the
// port bound.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <thread>

#include "base/units.h"
#include "cache/shared/server_identity.h"
#include "cache/shared/value_mac.h"
#include "server/api/auth.h"
#include "server/api/kiln_api.h"
#include "server/api/route_contracts.h"
#include "server/api/serve_options.h"
#include "server/http/http_server.h"
#include "tools/commands.h"

namespace kiln::tools {
namespace {

struct ServeArgs {
  std::string listen = "127.0.0.1:8470";
  std::string db = std::string(cache::kDefaultStorePath);
  std::string pool = "v5e:4";
  int compile_threads = 2;
  std::string max_body = "256MiB";
  std::string max_bytes = "0";
  std::string auth_file;
  std::string request_timeout = "30s";
  int loops = 0;
  std::string access_log = "on";
  uint64_t max_connections = 0;
  size_t pool_queue = 64;
  std::string execute_timeout = "60s";
  std::string host_memory = "50%";
  std::string shutdown_grace = "10s";
  std::string tune_in_background;  // empty: off
  std::string shared;              // empty: no shared tier
  std::string shared_key_file;
  std::string shared_ttl = "7d";
  std::string shared_lease = "15s";
  std::string shared_timeout = "2s";
  bool print_routes = false;
  std::string hash_token;
};

Result<api::ServeOptions> ResolveOptions(const ServeArgs& args, const CLI::App& cmd) {
  api::ServeOptions options;
  KILN_ASSIGN_OR_RETURN(options.listen, api::ParseListenAddress(args.listen));
  options.db_path = args.db;
  options.pool = args.pool;
  options.compile_threads = args.compile_threads;
  auto max_body = ParseByteSize(args.max_body);
  if (!max_body) return max_body.error().WithContext("--max-body");
  options.max_body_bytes = *max_body;
  auto max_bytes = api::ParseStoreBudget(args.max_bytes);
  if (!max_bytes) return max_bytes.error().WithContext("--max-bytes");
  options.max_store_bytes = *max_bytes;
  options.auth_file = args.auth_file;
  auto request_timeout = ParseDuration(args.request_timeout);
  if (!request_timeout) return request_timeout.error().WithContext("--request-timeout");
  options.request_timeout_ms = static_cast<int>(request_timeout->count());
  options.loops = args.loops;
  options.access_log = args.access_log == "on";
  options.max_connections = args.max_connections;
  options.pool_queue_capacity = args.pool_queue;
  auto execute_timeout = ParseDuration(args.execute_timeout);
  if (!execute_timeout) return execute_timeout.error().WithContext("--execute-timeout");
  options.execute_timeout = *execute_timeout;
  auto shutdown_grace = ParseDuration(args.shutdown_grace);
  if (!shutdown_grace) return shutdown_grace.error().WithContext("--shutdown-grace");
  options.shutdown_grace = *shutdown_grace;
  if (!args.tune_in_background.empty()) {
    auto tune = ParseDuration(args.tune_in_background);
    if (!tune) return tune.error().WithContext("--tune-in-background");
    options.tune_in_background = *tune;
  }
  options.shared_url = args.shared;
  options.shared_key_file = args.shared_key_file;
  auto shared_ttl = api::ParseSharedTtl(args.shared_ttl);
  if (!shared_ttl) return shared_ttl.error().WithContext("--shared-ttl");
  options.shared_ttl = *shared_ttl;
  auto shared_lease = api::ParseSharedLease(args.shared_lease);
  if (!shared_lease) return shared_lease.error().WithContext("--shared-lease");
  options.shared_lease = *shared_lease;
  auto shared_timeout = ParseDuration(args.shared_timeout);
  if (!shared_timeout) return shared_timeout.error().WithContext("--shared-timeout");
  options.shared_timeout = *shared_timeout;
  options.host_memory = args.host_memory;
  KILN_RETURN_IF_ERROR(api::ApplyEnvironment(
      options, [&cmd](std::string_view flag) { return cmd.count(std::string(flag)) > 0; }));
  return options;
}

// The connection cap: --max-connections, or what the open-files limit
// leaves (api::DefaultMaxConnections). Warns when an explicit cap leaves
// too few descriptors for the rest of the server.
uint64_t ResolveMaxConnections(const api::ServeOptions& options) {
  rlimit files{};
  const uint64_t limit =
      getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY ? files.rlim_cur : 0;
  const int loops = options.loops > 0 ? options.loops : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const uint64_t fitting = api::DefaultMaxConnections(limit, loops);
  if (options.max_connections == 0) return fitting;
  if (options.max_connections > fitting) {
    std::fprintf(stderr,
                 "kiln serve: warning: --max-connections %llu is more than the open-files limit (%llu) leaves "
                 "for connections (%llu): past that, accepting runs out of descriptors (raise ulimit -n)\n",
                 static_cast<unsigned long long>(options.max_connections), static_cast<unsigned long long>(limit),
                 static_cast<unsigned long long>(fitting));
  }
  return options.max_connections;
}

// The shared tier's settings; fails on a bad URL (never echoing a password).
Result<cache::shared::SharedTierOptions> SharedTierOptionsOf(const api::ServeOptions& options) {
  cache::shared::SharedTierOptions shared;
  KILN_ASSIGN_OR_RETURN(shared.url, cache::shared::ParseRedisUrlWithEnvironment(options.shared_url));
  shared.entry_ttl = options.shared_ttl;
  shared.lease_ttl = options.shared_lease;
  shared.client.connection.command_timeout = options.shared_timeout;
  shared.client.connection.connect_timeout = std::min<std::chrono::milliseconds>(options.shared_timeout, std::chrono::milliseconds(1000));
  cache::shared::ApplyTlsEnvironment(shared.client.connection);
  if (!options.shared_key_file.empty()) {
    std::ifstream in(options.shared_key_file, std::ios::binary);
    if (!in) return ErrnoError(errno, "--shared-key-file " + options.shared_key_file + ": cannot read");
    shared.value_key.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    while (!shared.value_key.empty() && (shared.value_key.back() == '\n' || shared.value_key.back() == '\r')) {
      shared.value_key.pop_back();
    }
    if (shared.value_key.size() < cache::shared::kMinValueKeyBytes) {
      return InvalidArgumentError("--shared-key-file " + options.shared_key_file + ": the key is " +
                                  std::to_string(shared.value_key.size()) + " bytes; at least " +
                                  std::to_string(cache::shared::kMinValueKeyBytes) +
                                  " are needed (e.g. openssl rand -hex 32 > FILE)");
    }
  }
  return shared;
}

// ", shared tier redis://host:port (up)" for the start line; a tier that
// cannot be reached is a warning, not a reason to stop: the server serves
// and compiles locally until it comes back.
std::string SharedTierLine(api::KilnApi& service) {
  cache::shared::SharedTier* shared = service.engine().shared_tier();
  if (shared == nullptr) return "";
  Status probe = shared->Probe();
  if (!probe) std::fprintf(stderr, "kiln serve: warning: %s; serving from the local tier until it answers\n",
                           probe.error().message.c_str());
  return ", shared tier " + shared->url().Redacted() + (probe ? " (up)" : " (unreachable)");
}

Status Serve(const api::ServeOptions& options) {
  // Before the store is opened: another server on this address (most likely
  // a kiln with another store) must keep it alone.
  KILN_RETURN_IF_ERROR(http::HttpServer::CheckAddressFree(options.listen.host, options.listen.port));
  api::ApiOptions service_options;
  service_options.db_path = options.db_path;
  service_options.max_store_bytes = options.max_store_bytes;
  service_options.pool_spec = options.pool;
  service_options.pool_queue_capacity = options.pool_queue_capacity;
  service_options.compile_threads = options.compile_threads;
  service_options.execute_timeout = options.execute_timeout;
  service_options.tune_in_background_s = static_cast<double>(options.tune_in_background.count()) / 1000;
  auto host_memory = api::ParseHostMemory(options.host_memory, api::PhysicalMemoryBytes());
  if (!host_memory) return host_memory.error().WithContext("--host-memory");
  service_options.host_memory_bytes = *host_memory;
  if (!options.auth_file.empty()) {
    KILN_ASSIGN_OR_RETURN(service_options.auth, api::Authenticator::Load(options.auth_file));
  }
  if (!options.shared_url.empty()) {
    KILN_ASSIGN_OR_RETURN(service_options.shared, SharedTierOptionsOf(options));
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<api::KilnApi> service, api::KilnApi::Create(std::move(service_options)));
  // A read-only store or a full disk: serve what is stored, compile uncached.
  if (std::string warning = service->StoreWarning(); !warning.empty()) {
    std::fprintf(stderr, "kiln serve: warning: %s\n", warning.c_str());
  }
  http::Router router;
  KILN_RETURN_IF_ERROR(service->RegisterRoutes(router));

  http::HttpServerOptions http_options;
  http_options.host = options.listen.host;
  http_options.port = options.listen.port;
  http_options.max_body_bytes = options.max_body_bytes;
  http_options.worker_threads = options.http_threads;
  http_options.request_timeout = std::chrono::milliseconds(options.request_timeout_ms);
  http_options.metrics = &service->metrics_registry();
  http_options.loops = options.loops;
  http_options.max_connections = ResolveMaxConnections(options);
  http_options.shutdown_grace = options.shutdown_grace;
  if (!options.access_log) http_options.access_log = nullptr;

  // SIGINT and SIGTERM are taken with sigwait below: block them before any
  // thread starts, so every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const size_t max_connections = http_options.max_connections;
  http::HttpServer server(std::move(http_options), std::move(router));
  service->SetDrainingProbe([&server] { return server.draining(); });
  KILN_RETURN_IF_ERROR(server.Start());
  // The name a fleet's tuning jobs show for this server: host:port.
  service->engine().tune().set_server_name(cache::shared::HostName() + ":" + std::to_string(server.port()));
  const uint64_t budget = service->options().host_memory_bytes;
  const std::string memory = budget == 0 ? "no host-memory budget"
                                         : std::to_string(budget >> 20) + " MiB host-memory budget";
  const std::string shared = SharedTierLine(*service);
  const std::string store_budget = options.max_store_bytes == 0
                                       ? "no store budget"
                                       : "store budget " + DescribeBytes(options.max_store_bytes);
  const std::string tuning = options.tune_in_background.count() == 0
                                 ? ""
                                 : ", background tuning " + std::to_string(options.tune_in_background.count()) + " ms";
  std::printf("kiln serving on http://%s:%u (db %s, %s, pool %s, %d loop thread%s, at most %zu connections, execute timeout %lld ms, %s%s%s%s)\n",
              options.listen.host.c_str(), server.port(), options.db_path.c_str(), store_budget.c_str(),
              service->engine().pool().spec().ToString().c_str(), server.loop_count(), server.loop_count() == 1 ? "" : "s",
              max_connections, static_cast<long long>(options.execute_timeout.count()), memory.c_str(),
              options.auth_file.empty() ? "" : ", auth on", tuning.c_str(), shared.c_str());
  std::fflush(stdout);
  int received = 0;
  sigwait(&signals, &received);
  std::fprintf(stderr, "kiln serve: %s, draining\n", received == SIGTERM ? "SIGTERM" : "SIGINT");
  // Runs still going a little before the grace period ends are stopped, so
  // their 503 answers are written before the transport closes the sockets.
  const std::chrono::milliseconds grace = options.shutdown_grace;
  const std::chrono::milliseconds margin = std::min<std::chrono::milliseconds>(grace / 4, std::chrono::seconds(1));
  service->BeginShutdown(std::chrono::steady_clock::now() + grace - margin);
  server.Stop();
  return Ok();
}

// "METHOD /pattern", then what the route accepts (route_contracts.h).
void PrintRoutes() {
  for (const std::string& route : api::KilnApi::RouteTable()) {
    std::string_view line = route;
    size_t space = line.find(' ');
    const http::RequestContract* contract =
        api::FindRouteContract(line.substr(0, space), line.substr(space + 1));
    std::string accepts = contract ? api::FormatRouteContract(*contract) : "";
    std::printf("%s%s%s\n", route.c_str(), accepts.empty() ? "" : " ", accepts.c_str());
  }
}

}  // namespace

void RegisterServe(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("serve", "Serve the HTTP API: compile cache, executables and the device pool");
  auto args = std::make_shared<ServeArgs>();
  cmd->add_option("--listen", args->listen, "Address to listen on, HOST:PORT (port 0: any free port) [KILN_LISTEN]")
      ->capture_default_str();
  cmd->add_option("--db", args->db, "SQLite file of the cache [KILN_DB]")->capture_default_str();
  cmd->add_option("--pool", args->pool, "Simulated chips, e.g. v5e:4,v6e:2 [KILN_POOL]")->capture_default_str();
  cmd->add_option("--compile-threads", args->compile_threads, "Threads that compile [KILN_COMPILE_THREADS]")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--max-body", args->max_body, "Largest request body after decoding [KILN_MAX_BODY]")
      ->capture_default_str();
  cmd->add_option("--max-bytes", args->max_bytes, "Store budget in compressed bytes, 0 = unlimited [KILN_MAX_BYTES]")
      ->capture_default_str();
  cmd->add_option("--auth-file", args->auth_file,
                  "Token file (lines 'SHA256 TENANT ROLE [shared]'); turns authentication on [KILN_AUTH_FILE]");
  cmd->add_option("--request-timeout", args->request_timeout,
                  "How long a request may take to arrive: 30s, 2m, 500ms (a bare number is seconds)")
      ->capture_default_str();
  cmd->add_option("--loops", args->loops,
                  "HTTP loop threads, each with its own SO_REUSEPORT listener; 0 = one per core [KILN_LOOPS]")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  cmd->add_option("--access-log", args->access_log, "One stderr line per request [KILN_ACCESS_LOG]")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->add_option("--max-connections", args->max_connections,
                  "Client connections at once; at the cap the longest-idle keep-alive one is closed for a newcomer, "
                  "and with none idle the newcomer gets 503. 0 = what the open-files limit leaves "
                  "[KILN_MAX_CONNECTIONS]")
      ->check(CLI::Range(uint64_t{0}, api::kMaxConnectionsLimit))
      ->capture_default_str();
  cmd->add_option("--pool-queue", args->pool_queue,
                  "Runs that may wait for a chip; beyond, an execute gets 503 pool_saturated with Retry-After "
                  "[KILN_POOL_QUEUE]")
      ->check(CLI::Range(size_t{1}, api::kMaxPoolQueue))
      ->capture_default_str();
  cmd->add_flag("--print-routes", args->print_routes, "Print the route table ('METHOD /path [query=..] [body=..]' lines) and exit");
  cmd->add_option("--execute-timeout", args->execute_timeout,
                  "Longest an execute may take, queued and running (60s, 500ms, 2m); a request may ask for "
                  "less with ?timeout= or X-Kiln-Timeout [KILN_EXECUTE_TIMEOUT]")
      ->capture_default_str();
  cmd->add_option("--host-memory", args->host_memory,
                  "Host memory all runs together may hold: a size (8GiB) or a share of RAM (50%); 0 = no "
                  "budget [KILN_HOST_MEMORY]")
      ->capture_default_str();
  cmd->add_option("--shutdown-grace", args->shutdown_grace,
                  "On SIGTERM/SIGINT, how long in-flight requests get; runs still going are stopped just "
                  "before it ends [KILN_SHUTDOWN_GRACE]")
      ->capture_default_str();
  cmd->add_option("--tune-in-background", args->tune_in_background,
                  "Autotune every compile miss for this long (30s, 2m) once it is answered; the tuned executable "
                  "replaces the entry when faster. Off by default [KILN_TUNE_IN_BACKGROUND]");
  cmd->add_option("--shared", args->shared,
                  "Share compiled entries with other kiln servers through Redis: redis://[user:password@]host:port[/db], "
                  "rediss:// for TLS, or host:port,host:port,... for a Redis Cluster; a password may come from "
                  "KILN_SHARED_PASSWORD instead [KILN_SHARED]");
  cmd->add_option("--shared-ttl", args->shared_ttl,
                  "How long an entry lives in Redis (7d, 12h; 0 = until Redis's maxmemory policy evicts it) "
                  "[KILN_SHARED_TTL]")
      ->capture_default_str();
  cmd->add_option("--shared-lease", args->shared_lease,
                  "Compile lease in Redis: renewed while compiling; another server takes over this long after "
                  "its holder dies [KILN_SHARED_LEASE]")
      ->capture_default_str();
  cmd->add_option("--shared-key-file", args->shared_key_file,
                  "A file holding the fleet's secret key: every value this server publishes carries its "
                  "HMAC-SHA256, and only values whose MAC verifies are used, so only servers with the key can "
                  "plant entries [KILN_SHARED_KEY_FILE]");
  cmd->add_option("--shared-timeout", args->shared_timeout,
                  "Deadline of one Redis exchange; past it the server backs off and serves locally "
                  "[KILN_SHARED_TIMEOUT]")
      ->capture_default_str();
  cmd->add_option("--hash-token", args->hash_token, "Print the SHA-256 of TOKEN for an auth file and exit");
  cmd->callback([args, cmd, exit_code] {
    if (args->print_routes) {
      PrintRoutes();
      return;
    }
    if (!args->hash_token.empty()) {
      std::printf("%s\n", api::HashToken(args->hash_token).c_str());
      return;
    }
    Result<api::ServeOptions> options = ResolveOptions(*args, *cmd);
    Status served = options ? Serve(*options) : Status(std::unexpected(options.error()));
    if (!served) {
      std::fprintf(stderr, "kiln serve: %s\n", served.error().ToString().c_str());
      *exit_code = 1;
    }
  });
}

}  // namespace kiln::tools
