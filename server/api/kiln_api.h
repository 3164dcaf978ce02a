// KilnApi: the HTTP API of `kiln serve` (schema/openapi.yaml) over the
// engine's services (server/service/engine.h).
//
// The API owns the engine; RegisterRoutes adds its handlers to a Router,
// and the HttpServer running that router must stop before the API is
// destroyed. A handler authenticates the caller and resolves its namespace
// (auth.h), reads the request into a service call, and writes the
// service's answer as JSON or bytes. Handlers run on the HTTP worker pool
// (SQLite, parsing) or hand their work to the services (compiles to the
// compile threads, runs to the pool's chips, tunings to the tuning
// workers); answers come back through the Responder (uv_async_send). On the
// loop thread run only /healthz, the dashboard and the hit path's fast paths
// (routes_executables.cc, routes_compile.cc): GET/HEAD of an executable and
// a compile of a body seen before, answered from memory after the in-memory
// auth checks; a memory miss falls through to the worker-pool handler.
//
// Errors are answered as JSON {"error": {"code", "message", ...}} with the
// statuses of the spec (server/http/error_status.h). Thread-safe: handlers
// run concurrently.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/metrics.h"
#include "base/status.h"
#include "base/version.h"
#include "server/api/auth.h"
#include "server/http/router.h"
#include "server/service/engine.h"

namespace kiln::api {

// The engine's options, and the front door's own.
struct ApiOptions : service::EngineOptions {
  Authenticator auth = Authenticator::Disabled();
  // The longest an execute may take, queued and running (504 beyond); a
  // request may ask for less.
  std::chrono::milliseconds execute_timeout{60'000};
  std::string version = std::string(kKilnVersion);
};

class KilnApi {
 public:
  // Starts the engine (opens the store, starts the pool and the threads).
  static Result<std::unique_ptr<KilnApi>> Create(ApiOptions options);
  ~KilnApi();

  KilnApi(const KilnApi&) = delete;
  KilnApi& operator=(const KilnApi&) = delete;

  // Adds every route of the API. Fails only on a routing bug.
  Status RegisterRoutes(http::Router& router);
  // "METHOD /pattern" for every route RegisterRoutes adds (HEAD is served
  // by the GET routes).
  static std::vector<std::string> RouteTable();

  // Makes /healthz answer 503 "draining" while `draining()` is true (the
  // transport's HttpServer::draining). Call before the server starts.
  void SetDrainingProbe(std::function<bool()> draining) { draining_ = std::move(draining); }

  // Shutdown: the engine's (Engine::BeginShutdown). Any thread; does not wait.
  void BeginShutdown(std::chrono::steady_clock::time_point by) { engine_->BeginShutdown(by); }

  // The registry the HttpServer should record into (HttpServerOptions::metrics),
  // so /metrics shows the transport's series beside the engine's.
  metrics::MetricsRegistry& metrics_registry() { return engine_->metrics().registry(); }
  const ApiOptions& options() const { return options_; }
  service::Engine& engine() { return *engine_; }
  // Why the store cannot write now (read-only, disk full, no room for its
  // delete reserve), for an operator; empty when it can.
  std::string StoreWarning() const { return engine_->store().Health().message; }

 private:
  // A request past authentication: who asks and in which namespace.
  struct Call {
    http::Request request;
    http::Responder respond;
    Principal principal;
    std::string tenant;  // the namespace the entries live in
  };
  using RouteFn = void (KilnApi::*)(Call call);
  // A fast path after authentication: answers from memory or returns nullopt.
  using FastRouteFn = std::optional<http::Response> (KilnApi::*)(const http::Request& request,
                                                                 const std::string& tenant);

  explicit KilnApi(ApiOptions options) : options_(std::move(options)) {}
  http::Handler Guard(Role required, RouteFn route);
  http::FastPath GuardFast(Role required, FastRouteFn route);

  // routes_compile.cc
  std::optional<http::Response> FastCompile(const http::Request& request, const std::string& tenant);
  void Compile(Call call);
  // routes_explain.cc
  void Explain(Call call);
  // routes_executables.cc
  std::optional<http::Response> FastGetExecutable(const http::Request& request, const std::string& tenant);
  void GetExecutable(Call call);
  void DeleteExecutable(Call call);
  // routes_execute.cc
  void Execute(Call call);
  // routes_tune.cc
  void StartTune(Call call);
  void GetTune(Call call);
  void ListTunes(Call call);
  void CancelTune(Call call);
  // routes_admin.cc
  void Stats(Call call);
  void Entries(Call call);
  void Pool(Call call);
  void Metrics(Call call);
  void StatsHistoryRoute(Call call);
  http::Response Health() const;
  static http::Response DashboardResponse();
  // routes_recompiles.cc
  void Recompiles(Call call);
  // routes_timing.cc: the entry's simulated profile; `key` gets its hex.
  Result<runtime::timing::DeviceProfile> SimulateEntry(const Call& call, std::string* key);
  void TimeExecutable(Call call);
  void TraceExecutable(Call call);

  const ApiOptions options_;
  std::unique_ptr<service::Engine> engine_;
  std::function<bool()> draining_;  // set before serving; then read-only
};

}  // namespace kiln::api
