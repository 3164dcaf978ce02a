// Connection: llhttp callbacks, request assembly and dispatch to handlers.
#include <algorithm>

#include "server/http/connection.h"
#include "server/http/content_coding.h"
#include "server/http/request_framing.h"
#include "server/http/server_loop.h"
#include "base/str_cat.h"
#include "server/http/url.h"

namespace kiln::http::internal {
namespace {

// Reserve at most this much for a declared Content-Length up front, so a
// header alone cannot make the server allocate the whole body limit.
constexpr size_t kMaxBodyReserve = 1 << 20;

Connection& Of(llhttp_t* parser) { return *static_cast<Connection*>(parser->data); }

// Handlers should not throw, but one that does (a throwing JSON parse, an
// allocation failure) must not unwind through llhttp or end a worker thread.
// Its Responder, destroyed by the unwinding, answers 500.
void RunHandler(const Route& route, Request request, Responder respond) {
  try {
    route.handler(std::move(request), std::move(respond));
  } catch (...) {
  }
}

// A fast path that throws is a miss: the handler gets the request.
std::optional<Response> RunFastPath(const Route& route, const Request& request) {
  try {
    return route.fast_path(request);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

const llhttp_settings_t& Connection::ParserSettings() {
  static const llhttp_settings_t settings = [] {
    llhttp_settings_t s;
    llhttp_settings_init(&s);
    s.on_message_begin = &Connection::OnMessageBegin;
    s.on_url = &Connection::OnUrl;
    s.on_header_field = &Connection::OnHeaderField;
    s.on_header_value = &Connection::OnHeaderValue;
    s.on_header_value_complete = &Connection::OnHeaderValueComplete;
    s.on_headers_complete = &Connection::OnHeadersComplete;
    s.on_chunk_header = &Connection::OnChunkHeader;
    s.on_body = &Connection::OnBody;
    s.on_message_complete = &Connection::OnMessageComplete;
    return s;
  }();
  return settings;
}

int Connection::OnMessageBegin(llhttp_t* parser) {
  Connection& c = Of(parser);
  c.incoming_ = Incoming{};
  c.incoming_.active = true;
  c.incoming_.start_ns = uv_hrtime();
  return 0;
}

int Connection::CountHeaderBytes(size_t length) {
  incoming_.header_bytes += length;
  if (incoming_.header_bytes <= server_.options().max_header_bytes) return 0;
  return Reject(ResourceExhaustedError(
                    StrCat("the request line and header fields exceed ", server_.options().max_header_bytes, " bytes"))
                    .WithReason("headers_too_large"));
}

int Connection::Reject(Error error) {
  rejection_ = std::move(error);
  return -1;
}

int Connection::OnUrl(llhttp_t* parser, const char* at, size_t length) {
  Connection& c = Of(parser);
  if (int rc = c.CountHeaderBytes(length); rc != 0) return rc;
  c.incoming_.request.target.append(at, length);
  // Strict llhttp still takes a request line ending right after the target
  // as HTTP/0.9 and waits for a header section; only then is the target
  // followed by CR or LF.
  if (c.EndsRequestLine(at + length)) return c.Reject(NoVersionError());
  return 0;
}

int Connection::OnHeaderField(llhttp_t* parser, const char* at, size_t length) {
  Connection& c = Of(parser);
  if (int rc = c.CountHeaderBytes(length); rc != 0) return rc;
  c.incoming_.field.append(at, length);
  return 0;
}

int Connection::OnHeaderValue(llhttp_t* parser, const char* at, size_t length) {
  Connection& c = Of(parser);
  if (int rc = c.CountHeaderBytes(length); rc != 0) return rc;
  // Strict llhttp still takes an obs-fold line as more of the value; only
  // then does a value span follow a line feed and blanks.
  if (c.LastNonBlankBefore(at) == '\n') return c.Reject(ObsFoldError(c.incoming_.field));
  c.incoming_.value.append(at, length);
  return 0;
}

int Connection::OnHeaderValueComplete(llhttp_t* parser) {
  Connection& c = Of(parser);
  Incoming& incoming = c.incoming_;
  if (incoming.field.empty()) return c.Reject(EmptyFieldNameError());
  incoming.request.headers.Add(std::move(incoming.field), std::move(incoming.value));
  incoming.field.clear();
  incoming.value.clear();
  return 0;
}

int Connection::OnHeadersComplete(llhttp_t* parser) { return Of(parser).HandleHeadersComplete(); }

int Connection::HandleHeadersComplete() {
  Request& request = incoming_.request;
  request.method = llhttp_method_name(static_cast<llhttp_method_t>(parser_.method));
  if (std::optional<Error> refused = CheckFraming(parser_, request.headers)) {
    return Reject(std::move(*refused));
  }
  const size_t max_body = server_.options().max_body_bytes;
  bool has_length = (parser_.flags & F_CONTENT_LENGTH) != 0;
  if (has_length && parser_.content_length > max_body) {
    return Reject(ResourceExhaustedError(
                      StrCat("Content-Length ", parser_.content_length, " exceeds the ", max_body, "-byte body limit"))
                      .WithReason("payload_too_large"));
  }
  if (std::optional<std::string_view> expect = request.headers.Get("Expect")) {
    if (!EqualsIgnoreCase(*expect, "100-continue")) {
      return Reject(
          FailedPreconditionError(StrCat("Expect: ", *expect, " is not supported")).WithReason("expectation_failed"));
    }
    // Only when no earlier response is still owed: interim responses must
    // not overtake final ones.
    if (pipeline_.empty()) SendContinue();
  }
  if (has_length) request.body.reserve(std::min<uint64_t>(parser_.content_length, kMaxBodyReserve));
  return 0;
}

int Connection::OnChunkHeader(llhttp_t* parser) {
  // Refuse an oversized chunk by its declared size, before reading it.
  Connection& c = Of(parser);
  const size_t max_body = c.server_.options().max_body_bytes;
  const size_t received = c.incoming_.request.body.size();
  if (parser->content_length > max_body - received) {
    return c.Reject(ResourceExhaustedError(StrCat("a chunk of ", parser->content_length, " bytes after ", received,
                                                  " would take the body past the ", max_body, "-byte limit"))
                        .WithReason("payload_too_large"));
  }
  return 0;
}

int Connection::OnBody(llhttp_t* parser, const char* at, size_t length) {
  Connection& c = Of(parser);
  std::string& body = c.incoming_.request.body;
  size_t max_body = c.server_.options().max_body_bytes;
  if (body.size() + length > max_body) {
    return c.Reject(ResourceExhaustedError(StrCat("the request body exceeds the ", max_body, "-byte limit"))
                        .WithReason("payload_too_large"));
  }
  body.append(at, length);
  return 0;
}

int Connection::OnMessageComplete(llhttp_t* parser) { return Of(parser).HandleMessageComplete(); }

int Connection::HandleMessageComplete() {
  Request request = std::move(incoming_.request);
  uint64_t start_ns = incoming_.start_ns;
  incoming_ = Incoming{};
  request.keep_alive = llhttp_should_keep_alive(&parser_) != 0;
  request.peer = peer_;

  Slot& slot = AddSlot();
  slot.method = llhttp_method_name(static_cast<llhttp_method_t>(parser_.method));
  slot.target = request.target;
  slot.route = "-";
  slot.start_ns = start_ns;
  slot.head = parser_.method == HTTP_HEAD;
  slot.http10 = parser_.http_major == 1 && parser_.http_minor == 0;
  slot.keep_alive = request.keep_alive && !server_.draining();
  if (!slot.keep_alive) no_more_requests_ = true;

  Dispatch(std::move(request), slot);
  if (no_more_requests_ || !CanAcceptMore()) return HPE_PAUSED;
  return 0;
}

void Connection::Dispatch(Request request, Slot& slot) {
  Result<ParsedTarget> target = ParseTarget(request.target);
  if (!target) {
    Finish(slot, ErrorResponse(InvalidArgumentError(target.error().ToString()).WithReason("bad_request")));
    return;
  }
  request.path = std::move(target->path);
  request.query = std::move(target->query);

  RouteMatch match = server_.router().Match(request.method, request.path);
  switch (match.kind) {
    case RouteMatch::Kind::kNotFound:
      Finish(slot, ErrorResponse(NotFoundError(StrCat("no route for ", request.method, " ", request.path))));
      return;
    case RouteMatch::Kind::kMethodNotAllowed: {
      Response response = ErrorResponse(
          UnimplementedError(StrCat(request.method, " is not allowed on ", request.path, "; allowed: ", match.allow))
              .WithReason("method_not_allowed"));
      response.headers.Set("Allow", match.allow);
      Finish(slot, std::move(response));
      return;
    }
    case RouteMatch::Kind::kBadPath:
      Finish(slot, ErrorResponse(InvalidArgumentError(match.error).WithReason("bad_request")));
      return;
    case RouteMatch::Kind::kFound:
      break;
  }

  const Route* route = match.route;  // the Router outlives the loop and the workers
  slot.route = route->pattern;
  if (route->contract) {
    if (std::optional<Error> refused =
            CheckRequestContract(*route->contract, request, {route->method, route->pattern})) {
      Finish(slot, ErrorResponse(*refused));
      return;
    }
  }
  request.route = route->pattern;
  request.path_params = std::move(match.path_params);
  std::optional<std::string_view> accept = request.headers.Get("Accept-Encoding");
  ResponseTicket ticket{.connection_id = id_,
                        .sequence = slot.sequence,
                        .accepts_zstd = accept && ListHasToken(*accept, "zstd"),
                        .head = slot.head};

  // Decoding a body is CPU work, so an encoded body sends even an inline
  // route (and a fast path) to the pool.
  const bool encoded = request.headers.Has("Content-Encoding");
  if (route->fast_path && !encoded) {
    if (std::optional<Response> answer = RunFastPath(*route, request)) {
      FinishFromFastPath(slot, ticket, std::move(*answer));
      return;
    }
  }
  if (route->execution == Execution::kInline && !encoded) {
    RunHandler(*route, std::move(request), Responder(server_.channel(), ticket));
    return;
  }
  slot.cancel = std::make_shared<CancelSignal>();
  request.cancel = slot.cancel;
  // Busy from now on, in the loop's lists too, before a worker can run the
  // handler: another loop deciding whether a newcomer may take an idle
  // connection's place must not count this one (it would admit the
  // newcomer past the cap instead of answering 503).
  RefreshIdle();
  WorkerPool::Task task = [route, ticket, channel = server_.channel(),
                           max_body = server_.options().max_body_bytes,
                           request = std::move(request)]() mutable {
    Responder respond(std::move(channel), ticket);
    if (auto decoded = DecodeRequestBody(request, max_body); !decoded) {
      respond(ErrorResponse(decoded.error()));
      return;
    }
    RunHandler(*route, std::move(request), std::move(respond));
  };
  if (!server_.SubmitToWorkers(task)) {
    Finish(slot, ErrorResponse(UnavailableError("every worker is busy and the queue is full; retry later")
                                   .WithReason("overloaded")
                                   .RetryAfter(server_.options().retry_after_seconds)));
  }
}

void Connection::FinishFromFastPath(Slot& slot, const ResponseTicket& ticket, Response response) {
  const CompressionPolicy& policy = server_.channel()->policy();
  const bool compress_allowed = !ticket.head;
  if (!WouldCompress(response, ticket.accepts_zstd, compress_allowed, policy)) {
    slot.wire = ChooseWireBody(response, ticket.accepts_zstd, compress_allowed, policy);
    slot.response = std::move(response);
    slot.ready = true;
    return;
  }
  // Compressing is CPU work: the Responder does it on a worker thread.
  auto shared = std::make_shared<Response>(std::move(response));
  WorkerPool::Task task = [shared, ticket, channel = server_.channel()]() mutable {
    Responder(std::move(channel), ticket)(std::move(*shared));
  };
  if (!server_.SubmitToWorkers(task)) Finish(slot, std::move(*shared));  // busy: send it plain
}

}  // namespace kiln::http::internal
