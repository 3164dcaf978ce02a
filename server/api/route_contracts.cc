#include "server/api/route_contracts.h"

#include <utility>
#include <vector>

namespace kiln::api {
namespace {

struct RouteContract {
  std::string_view method;
  std::string_view pattern;
  http::RequestContract contract;
};

// HLO text, as text/plain (or untyped: read as text), as the
// application/x-www-form-urlencoded that `curl --data-binary` labels it with
// (taken verbatim, never form-decoded) or as bytes; or a JSON CompileRequest.
http::RequestContract HloBody(std::vector<std::string> query) {
  return http::RequestContract{.query = std::move(query),
                               .body_types = {"text/plain", "application/json",
                                              "application/x-www-form-urlencoded",
                                              "application/octet-stream"},
                               .untyped_body = true};
}

const std::vector<RouteContract>& Table() {
  static const std::vector<RouteContract> table = {
      {"POST", "/v1/compile", HloBody({"chip", "plan", "scoped_vmem_bytes", "topology", "arg_shapes", "return"})},
      {"POST", "/v1/explain", HloBody({"chip", "plan", "scoped_vmem_bytes", "topology", "arg_shapes"})},
      {"GET", "/v1/executables/{key}", {}},
      {"DELETE", "/v1/executables/{key}", {}},
      {"POST",
       "/v1/executables/{key}/execute",
       {.query = {"timeout"},
        .body_types = {"application/vnd.safetensors", "application/octet-stream",
                       "application/json"}}},
      {"POST", "/v1/executables/{key}/time", {}},
      {"GET", "/v1/executables/{key}/trace", {}},
      {"POST", "/v1/tune", {.body_types = {"application/json"}}},
      {"GET", "/v1/tune", {.query = {"limit"}}},
      {"GET", "/v1/tune/{id}", {}},
      {"DELETE", "/v1/tune/{id}", {}},
      {"GET", "/v1/stats", {}},
      {"GET", "/v1/stats/history", {}},
      {"GET", "/v1/entries", {.query = {"chip", "plan", "sort", "limit", "cursor"}}},
      {"GET", "/v1/recompiles", {.query = {"name", "min_keys"}}},
      {"GET", "/v1/pool", {}},
      {"GET", "/metrics", {}},
      {"GET", "/healthz", {}},
      {"GET", "/", {}},
  };
  return table;
}

std::string JoinComma(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ",") + name;
  return out;
}

}  // namespace

const http::RequestContract* FindRouteContract(std::string_view method, std::string_view pattern) {
  for (const RouteContract& entry : Table()) {
    if (entry.method == method && entry.pattern == pattern) return &entry.contract;
  }
  return nullptr;
}

Status DeclareRouteContracts(http::Router& router) {
  std::vector<std::pair<std::string, std::string>> routes;
  for (const http::Route& route : router.routes()) routes.emplace_back(route.method, route.pattern);
  for (const auto& [method, pattern] : routes) {
    const http::RequestContract* contract = FindRouteContract(method, pattern);
    if (contract == nullptr) {
      return InternalError("route " + method + " " + pattern + " has no request contract in server/route_contracts.cc");
    }
    KILN_RETURN_IF_ERROR(router.Declare(method, pattern, *contract));
  }
  return Ok();
}

std::string FormatRouteContract(const http::RequestContract& contract) {
  std::string out;
  auto add = [&out](const std::string& field) { out += (out.empty() ? "" : " ") + field; };
  if (!contract.query.empty()) add("query=" + JoinComma(contract.query));
  if (!contract.body_types.empty()) add("body=" + JoinComma(contract.body_types));
  if (contract.untyped_body) add("untyped-body");
  return out;
}

}  // namespace kiln::api
