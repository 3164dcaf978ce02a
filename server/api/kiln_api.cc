#include "server/api/kiln_api.h"

#include "server/api/dashboard_page.h"
#include "server/api/route_contracts.h"
#include "server/http/json_response.h"

namespace kiln::api {

Result<std::unique_ptr<KilnApi>> KilnApi::Create(ApiOptions options) {
  std::unique_ptr<KilnApi> api(new KilnApi(std::move(options)));
  KILN_ASSIGN_OR_RETURN(api->engine_, service::Engine::Create(api->options_));
  return api;
}

KilnApi::~KilnApi() = default;

http::Response KilnApi::DashboardResponse() {
  http::Response response = http::Response::Text(200, std::string(DashboardPage()), "text/html; charset=utf-8");
  response.headers.Set("Cache-Control", "no-cache");
  response.headers.Set("X-Content-Type-Options", "nosniff");
  // Inline script and style only, API calls to this origin only, never framed.
  response.headers.Set("Content-Security-Policy",
                       "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                       "img-src data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
  return response;
}

http::Handler KilnApi::Guard(Role required, RouteFn route) {
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

http::FastPath KilnApi::GuardFast(Role required, FastRouteFn route) {
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

// One table for RegisterRoutes and RouteTable, so --print-routes cannot drift.
// The last column is the route's inline fast path (the hit path), if any.
#define KILN_API_ROUTES(X)                                                                             \
  X("POST", "/v1/compile", Role::kCompile, &KilnApi::Compile, &KilnApi::FastCompile)                   \
  X("POST", "/v1/explain", Role::kRead, &KilnApi::Explain, nullptr)                                    \
  X("GET", "/v1/executables/{key}", Role::kRead, &KilnApi::GetExecutable, &KilnApi::FastGetExecutable) \
  X("DELETE", "/v1/executables/{key}", Role::kAdmin, &KilnApi::DeleteExecutable, nullptr)              \
  X("POST", "/v1/executables/{key}/execute", Role::kCompile, &KilnApi::Execute, nullptr)               \
  X("POST", "/v1/executables/{key}/time", Role::kCompile, &KilnApi::TimeExecutable, nullptr)           \
  X("GET", "/v1/executables/{key}/trace", Role::kRead, &KilnApi::TraceExecutable, nullptr)             \
  X("POST", "/v1/tune", Role::kCompile, &KilnApi::StartTune, nullptr)                                  \
  X("GET", "/v1/tune", Role::kRead, &KilnApi::ListTunes, nullptr)                                      \
  X("GET", "/v1/tune/{id}", Role::kRead, &KilnApi::GetTune, nullptr)                                   \
  X("DELETE", "/v1/tune/{id}", Role::kCompile, &KilnApi::CancelTune, nullptr)                          \
  X("GET", "/v1/stats", Role::kRead, &KilnApi::Stats, nullptr)                                         \
  X("GET", "/v1/stats/history", Role::kRead, &KilnApi::StatsHistoryRoute, nullptr)                     \
  X("GET", "/v1/entries", Role::kRead, &KilnApi::Entries, nullptr)                                     \
  X("GET", "/v1/recompiles", Role::kRead, &KilnApi::Recompiles, nullptr)                               \
  X("GET", "/v1/pool", Role::kRead, &KilnApi::Pool, nullptr)                                           \
  X("GET", "/metrics", Role::kAdmin, &KilnApi::Metrics, nullptr)

Status KilnApi::RegisterRoutes(http::Router& router) {
#define KILN_ADD_ROUTE(method, pattern, role, fn, fast)                                          \
  if (FastRouteFn fast_fn = fast; fast_fn != nullptr) {                                          \
    KILN_RETURN_IF_ERROR(router.Add(method, pattern, GuardFast(role, fast_fn), Guard(role, fn))); \
  } else {                                                                                       \
    KILN_RETURN_IF_ERROR(router.Add(method, pattern, Guard(role, fn)));                          \
  }
  KILN_API_ROUTES(KILN_ADD_ROUTE)
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

std::vector<std::string> KilnApi::RouteTable() {
  std::vector<std::string> routes;
#define KILN_LIST_ROUTE(method, pattern, role, fn, fast) routes.push_back(std::string(method) + " " + pattern);
  KILN_API_ROUTES(KILN_LIST_ROUTE)
#undef KILN_LIST_ROUTE
  routes.push_back("GET /healthz");
  routes.push_back("GET /");
  return routes;
}

}  // namespace kiln::api
