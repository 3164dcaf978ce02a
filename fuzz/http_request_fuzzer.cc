// libFuzzer harness: the HTTP request path without sockets, fast. The
// input is a client's byte stream; strict llhttp (as the server builds it)
// frames it into requests, collected here the way the server's connection
// does (server/http/connection_parser.cc), and each request then goes
// through the same pure steps: the transport's framing rules, the target's
// path and query, routing over kiln's route table, the route's request
// contract, zstd content decoding, Accept-Encoding, then the service's
// request readers (bearer-token auth and namespace, the compile request's
// body and query, the execute timeout).
//
// The whole server, sockets and handlers included, is http_server_fuzzer.
#include <llhttp.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "server/api/auth.h"
#include "server/api/compile_request.h"
#include "server/service/run_limits.h"
#include "server/http/content_coding.h"
#include "server/http/request_contract.h"
#include "server/http/request_framing.h"
#include "server/http/router.h"
#include "server/http/url.h"
#include "server/api/kiln_api.h"
#include "server/api/route_contracts.h"

namespace {

using namespace kiln;

constexpr size_t kMaxBodyBytes = 1 << 20;
constexpr size_t kMaxHeaderBytes = 64 << 10;

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "http_request_fuzzer: %s\n", message.c_str());
  std::abort();
}

// kiln's routes (KilnApi::RouteTable) with their contracts; the
// handlers are never run here.
const http::Router& Routes() {
  static const http::Router router = [] {
    http::Router r;
    for (const std::string& route : api::KilnApi::RouteTable()) {
      size_t space = route.find(' ');
      if (!r.Add(route.substr(0, space), route.substr(space + 1), [](http::Request, http::Responder) {})) {
        Die("cannot add route " + route);
      }
    }
    if (Status declared = api::DeclareRouteContracts(r); !declared) Die(declared.error().message);
    return r;
  }();
  return router;
}

const api::Authenticator& Auth() {
  static const api::Authenticator auth = [] {
    auto parsed = api::Authenticator::Parse(
        api::HashToken("fuzz-token") + " fuzz compile shared\n", "<fuzz>");
    if (!parsed) Die(parsed.error().message);
    return std::move(*parsed);
  }();
  return auth;
}

// What the server does with a complete request after llhttp.
void Serve(http::Request request) {
  auto target = http::ParseTarget(request.target);
  if (!target) return;
  request.path = std::move(target->path);
  request.query = std::move(target->query);
  http::RouteMatch match = Routes().Match(request.method, request.path);
  if (match.kind != http::RouteMatch::Kind::kFound) return;
  const http::Route& route = *match.route;
  if (route.contract &&
      http::CheckRequestContract(*route.contract, request, {route.method, route.pattern})) {
    return;
  }
  request.route = route.pattern;
  request.path_params = std::move(match.path_params);
  if (auto accept = request.headers.Get("Accept-Encoding")) (void)http::ListHasToken(*accept, "zstd");
  if (!http::DecodeRequestBody(request, kMaxBodyBytes)) return;

  auto principal = Auth().Authenticate(request);
  if (!principal) return;
  auto tenant = api::ResolveNamespace(*principal, request);
  if (!tenant) return;
  if (route.pattern == "/v1/compile" || route.pattern == "/v1/explain") {
    (void)api::ParseCompileRequestKey(request, *tenant);
    (void)api::ParseCompileRequest(request, *tenant);
  } else if (route.pattern == "/v1/executables/{key}/execute") {
    (void)api::ExecuteTimeout(request, std::chrono::seconds(60));
  }
}

// One connection's parse, collecting requests as the server's Connection
// does (header byte and body limits included).
struct Collector {
  llhttp_t parser{};
  http::Request request;
  std::string field;
  std::string value;
  size_t header_bytes = 0;

  static Collector& Of(llhttp_t* p) { return *static_cast<Collector*>(p->data); }
  int CountHeaderBytes(size_t length) {
    header_bytes += length;
    return header_bytes <= kMaxHeaderBytes ? 0 : -1;
  }
};

const llhttp_settings_t& Settings() {
  static const llhttp_settings_t settings = [] {
    llhttp_settings_t s;
    llhttp_settings_init(&s);
    s.on_message_begin = [](llhttp_t* p) {
      Collector& c = Collector::Of(p);
      c.request = http::Request{};
      c.field.clear();
      c.value.clear();
      c.header_bytes = 0;
      return 0;
    };
    s.on_url = [](llhttp_t* p, const char* at, size_t length) {
      Collector& c = Collector::Of(p);
      if (c.CountHeaderBytes(length) != 0) return -1;
      c.request.target.append(at, length);
      return 0;
    };
    s.on_header_field = [](llhttp_t* p, const char* at, size_t length) {
      Collector& c = Collector::Of(p);
      if (c.CountHeaderBytes(length) != 0) return -1;
      c.field.append(at, length);
      return 0;
    };
    s.on_header_value = [](llhttp_t* p, const char* at, size_t length) {
      Collector& c = Collector::Of(p);
      if (c.CountHeaderBytes(length) != 0) return -1;
      c.value.append(at, length);
      return 0;
    };
    s.on_header_value_complete = [](llhttp_t* p) {
      Collector& c = Collector::Of(p);
      c.request.headers.Add(std::move(c.field), std::move(c.value));
      c.field.clear();
      c.value.clear();
      return 0;
    };
    s.on_headers_complete = [](llhttp_t* p) {
      Collector& c = Collector::Of(p);
      c.request.method = llhttp_method_name(static_cast<llhttp_method_t>(p->method));
      if (http::internal::CheckFraming(*p, c.request.headers)) return -1;
      if ((p->flags & F_CONTENT_LENGTH) != 0 && p->content_length > kMaxBodyBytes) return -1;
      return 0;
    };
    s.on_chunk_header = [](llhttp_t* p) {
      Collector& c = Collector::Of(p);
      return p->content_length > kMaxBodyBytes - c.request.body.size() ? -1 : 0;
    };
    s.on_body = [](llhttp_t* p, const char* at, size_t length) {
      Collector& c = Collector::Of(p);
      if (c.request.body.size() + length > kMaxBodyBytes) return -1;
      c.request.body.append(at, length);
      return 0;
    };
    s.on_message_complete = [](llhttp_t* p) {
      Collector& c = Collector::Of(p);
      c.request.keep_alive = llhttp_should_keep_alive(p) != 0;
      Serve(std::move(c.request));
      c.request = http::Request{};
      return 0;
    };
    return s;
  }();
  return settings;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Routes();
  Auth();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Collector collector;
  llhttp_init(&collector.parser, HTTP_REQUEST, &Settings());
  collector.parser.data = &collector;
  llhttp_errno_t err = llhttp_execute(&collector.parser, reinterpret_cast<const char*>(data), size);
  if (err == HPE_OK) (void)llhttp_finish(&collector.parser);
  return 0;
}
