#include "server/kiln_service.h"

#include <algorithm>
#include <map>

#include "server/http/json_response.h"
#include "server/dashboard_page.h"
#include "server/route_contracts.h"

namespace kiln::server {

KilnService::KilnService(ServiceOptions options)
    : options_(std::move(options)), programs_(options_.program_cache_entries) {}

KilnService::~KilnService() {
  // Tuning first (it uses the store, the gate and the caches), then
  // compiles (they write the store), then runs (they answer through the
  // pool's callbacks), then the store closes; the watcher before all.
  watcher_.reset();
  tune_jobs_.reset();
  shared_stopping_ = true;
  lease_waiter_.reset();    // its waits end on the shared threads
  shared_threads_.reset();  // they hand compiles on to the compile threads
  compile_threads_.reset();
  pool_.reset();
  store_.reset();
}

Result<std::unique_ptr<KilnService>> KilnService::Create(ServiceOptions options) {
  if (options.compile_threads < 1) return InvalidArgumentError("compile threads must be at least 1");
  std::unique_ptr<KilnService> service(new KilnService(std::move(options)));
  cache::CacheStoreOptions store_options;
  store_options.path = service->options_.db_path;
  store_options.max_bytes = service->options_.max_store_bytes;
  auto store = cache::CacheStore::Open(store_options);
  if (!store) return store.error().WithContext("database " + service->options_.db_path);
  service->store_ = std::move(*store);
  if (service->options_.shared) {
    service->shared_ = std::make_unique<cache::shared::SharedTier>(*service->options_.shared);
    service->shared_metrics_ = std::make_unique<SharedTierMetrics>(service->metrics_.registry());
    // Mostly waiting on Redis: more threads than compile threads, so
    // waits on other servers' compiles do not queue behind each other.
    service->shared_threads_ = std::make_unique<WorkerPool>(std::max(8, 4 * service->options_.compile_threads),
                                                                  service->options_.compile_queue_capacity);
    service->lease_waiter_ = std::make_unique<cache::shared::LeaseWaiter>(*service->shared_);
  }

  runtime::pool::PoolOptions pool_options;
  pool_options.max_queued = service->options_.pool_queue_capacity;
  pool_options.host_memory_bytes = service->options_.host_memory_bytes;
  pool_options.max_memory_wait = service->options_.host_memory_wait;
  KILN_ASSIGN_OR_RETURN(service->pool_, runtime::pool::DevicePool::Create(service->options_.pool_spec, pool_options));
  std::map<std::string, int> seen;
  for (const runtime::pool::ChipStatus& chip : service->pool_->status().chips) {
    service->per_kind_index_.push_back(seen[chip.kind]++);
  }
  service->running_key_.resize(service->per_kind_index_.size());
  service->compile_threads_ = std::make_unique<WorkerPool>(service->options_.compile_threads,
                                                                 service->options_.compile_queue_capacity);
  if (service->options_.tune_workers < 1) return InvalidArgumentError("tuning workers must be at least 1");
  TuneJobs::Options tune_options;
  tune_options.workers = service->options_.tune_workers;
  tune_options.queue_capacity = service->options_.tune_queue_capacity;
  KilnService* self = service.get();
  service->tune_jobs_ = std::make_unique<TuneJobs>(
      tune_options, [self](const TuneJobSpec& spec, TuneProgress& progress, const std::function<bool()>& cancelled) {
        return self->RunTuneJob(spec, progress, cancelled);
      });
  service->watcher_ = std::make_unique<StoreWatcher>(
      *service->store_, service->options_.store_watch_interval,
      [self](const cache::CacheStore::Invalidations& taken) { self->DropInvalidated(taken); });
  service->history_ = std::make_unique<StatsHistory>(
      [self] {
        const CompileCounters compiles = self->metrics_.compile_counters();
        const ExecuteCounters runs = self->metrics_.execute_counters();
        const auto now = std::chrono::system_clock::now().time_since_epoch();
        return StatsSample{.unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now).count(),
                           .hits = compiles.hits + compiles.joined,
                           .misses = compiles.misses,
                           .compile_seconds_saved = compiles.compile_ms_saved / 1000,
                           .executions = runs.requests,
                           .device_seconds = runs.device_us_total * 1e-6};
      },
      service->options_.stats_history_interval, service->options_.stats_history_samples);
  return service;
}

void KilnService::DropInvalidated(const cache::CacheStore::Invalidations& taken) {
  if (taken.everything) {
    index_.Clear();
    programs_.Clear();
    return;
  }
  for (const cache::EntryId& id : taken.ids) {
    index_.Forget(id);
    programs_.Erase(id);
  }
}

http::Response KilnService::DashboardResponse() {
  http::Response response = http::Response::Text(200, std::string(DashboardPage()), "text/html; charset=utf-8");
  response.headers.Set("Cache-Control", "no-cache");
  response.headers.Set("X-Content-Type-Options", "nosniff");
  // Inline script and style only, API calls to this origin only, never framed.
  response.headers.Set("Content-Security-Policy",
                       "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                       "img-src data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
  return response;
}

http::Handler KilnService::Guard(Role required, RouteFn route) {
  return [this, required, route](http::Request request, http::Responder respond) {
    Result<Principal> principal = options_.auth.Authenticate(request);
    if (!principal) return respond(http::ErrorResponse(principal.error()));
    if (auto allowed = Authorize(*principal, required, request); !allowed) {
      return respond(http::ErrorResponse(allowed.error()));
    }
    Result<std::string> tenant = ResolveNamespace(*principal, request);
    if (!tenant) return respond(http::ErrorResponse(tenant.error()));
    (this->*route)(Call{std::move(request), std::move(respond), std::move(*principal), std::move(*tenant)});
  };
}

http::FastPath KilnService::GuardFast(Role required, FastRouteFn route) {
  // The same checks as Guard, all in memory; a refusal is answered here.
  return [this, required, route](const http::Request& request) -> std::optional<http::Response> {
    Result<Principal> principal = options_.auth.Authenticate(request);
    if (!principal) return http::ErrorResponse(principal.error());
    if (auto allowed = Authorize(*principal, required, request); !allowed) return http::ErrorResponse(allowed.error());
    Result<std::string> tenant = ResolveNamespace(*principal, request);
    if (!tenant) return http::ErrorResponse(tenant.error());
    return (this->*route)(request, *tenant);
  };
}

void KilnService::ScheduleHitStatsFlush() {
  if (hit_flush_queued_.exchange(true)) return;
  WorkerPool::Task task = [this] {
    (void)store_->FlushHitStats();  // advisory figures: a failure waits for the next flush
    hit_flush_queued_.store(false);
  };
  if (!compile_threads_->TrySubmit(task)) hit_flush_queued_.store(false);
}

// One table for RegisterRoutes and RouteTable, so --print-routes cannot drift.
// The last column is the route's inline fast path (the hit path), if any.
#define KILN_SERVICE_ROUTES(X)                                                                                  \
  X("POST", "/v1/compile", Role::kCompile, &KilnService::Compile, &KilnService::FastCompile)                    \
  X("POST", "/v1/explain", Role::kRead, &KilnService::Explain, nullptr)                                         \
  X("GET", "/v1/executables/{key}", Role::kRead, &KilnService::GetExecutable, &KilnService::FastGetExecutable) \
  X("DELETE", "/v1/executables/{key}", Role::kAdmin, &KilnService::DeleteExecutable, nullptr)                   \
  X("POST", "/v1/executables/{key}/execute", Role::kCompile, &KilnService::Execute, nullptr)                    \
  X("POST", "/v1/executables/{key}/time", Role::kCompile, &KilnService::TimeExecutable, nullptr)               \
  X("GET", "/v1/executables/{key}/trace", Role::kRead, &KilnService::TraceExecutable, nullptr)                 \
  X("POST", "/v1/tune", Role::kCompile, &KilnService::StartTune, nullptr)                                       \
  X("GET", "/v1/tune", Role::kRead, &KilnService::ListTunes, nullptr)                                           \
  X("GET", "/v1/tune/{id}", Role::kRead, &KilnService::GetTune, nullptr)                                        \
  X("DELETE", "/v1/tune/{id}", Role::kCompile, &KilnService::CancelTune, nullptr)                               \
  X("GET", "/v1/stats", Role::kRead, &KilnService::Stats, nullptr)                                              \
  X("GET", "/v1/stats/history", Role::kRead, &KilnService::StatsHistoryRoute, nullptr)                          \
  X("GET", "/v1/entries", Role::kRead, &KilnService::Entries, nullptr)                                          \
  X("GET", "/v1/recompiles", Role::kRead, &KilnService::Recompiles, nullptr)                                    \
  X("GET", "/v1/pool", Role::kRead, &KilnService::Pool, nullptr)                                                \
  X("GET", "/metrics", Role::kAdmin, &KilnService::Metrics, nullptr)

Status KilnService::RegisterRoutes(http::Router& router) {
#define KILN_ADD_ROUTE(method, pattern, role, fn, fast)                                          \
  if (FastRouteFn fast_fn = fast; fast_fn != nullptr) {                                          \
    KILN_RETURN_IF_ERROR(router.Add(method, pattern, GuardFast(role, fast_fn), Guard(role, fn))); \
  } else {                                                                                       \
    KILN_RETURN_IF_ERROR(router.Add(method, pattern, Guard(role, fn)));                          \
  }
  KILN_SERVICE_ROUTES(KILN_ADD_ROUTE)
#undef KILN_ADD_ROUTE
  // Liveness needs no token and touches only memory: answered on the loop.
  KILN_RETURN_IF_ERROR(router.Add("GET", "/healthz",
                                  [this](http::Request, http::Responder respond) { respond(Health()); },
                                  http::Execution::kInline));
  // The dashboard page: static, no data, so no token (its API calls carry one).
  KILN_RETURN_IF_ERROR(router.Add("GET", "/", [](http::Request, http::Responder respond) { respond(DashboardResponse()); },
                                  http::Execution::kInline));
  // What each route accepts (query parameters, body types): route_contracts.cc.
  return DeclareRouteContracts(router);
}

std::vector<std::string> KilnService::RouteTable() {
  std::vector<std::string> routes;
#define KILN_LIST_ROUTE(method, pattern, role, fn, fast) routes.push_back(std::string(method) + " " + pattern);
  KILN_SERVICE_ROUTES(KILN_LIST_ROUTE)
#undef KILN_LIST_ROUTE
  routes.push_back("GET /healthz");
  routes.push_back("GET /");
  return routes;
}

int KilnService::PerKindIndex(int pool_index) const {
  if (pool_index < 0 || pool_index >= static_cast<int>(per_kind_index_.size())) return pool_index;
  return per_kind_index_[pool_index];
}

}  // namespace kiln::server
