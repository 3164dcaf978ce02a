// What each route of the API accepts besides its path, as
// schema/openapi.yaml describes it: the query parameters it reads and the
// media types its request body may have (http/request_contract.h).
//
// One table for the server (DeclareRouteContracts), `kiln serve
// --print-routes` (FormatRouteContract) and, through that, the check of the
// table against the spec (scripts/check_openapi_routes.py). Pure data;
// thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "server/http/request_contract.h"
#include "server/http/router.h"

namespace kiln::api {

// The contract of the route `method` `pattern`, or null when it has none.
const http::RequestContract* FindRouteContract(std::string_view method, std::string_view pattern);

// Declares its contract on every route of `router`. Fails naming a route
// the table does not cover, so a new route cannot skip the checks.
Status DeclareRouteContracts(http::Router& router);

// "query=chip,plan body=text/plain,application/json untyped-body"; "" when
// the route takes neither (--print-routes appends it to the route).
std::string FormatRouteContract(const http::RequestContract& contract);

}  // namespace kiln::api
