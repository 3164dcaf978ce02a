// What a route runs, and how it answers.
//
// A Handler owns the Request it receives and answers exactly once through the
// Responder, from any thread, now or later. Handlers report errors as
// responses; should one throw anyway, the request is answered 500. Handlers registered as kInline
// run on the loop thread and must only touch in-memory data (a hot-set hit,
// /metrics); all others run on the worker pool and may block.
#pragma once

#include <functional>
#include <optional>

#include "server/http/request.h"
#include "server/http/responder.h"
#include "server/http/response.h"

namespace kiln::http {

using Handler = std::function<void(Request request, Responder respond)>;

enum class Execution {
  kWorkerPool,  // parsing, compiling, executing, SQLite: anything that blocks
  kInline,      // on the loop thread; microseconds, no I/O, no locks held long
};

// A route's optional inline fast path. It runs on the loop thread before the
// route's handler and either answers from memory or returns nullopt, and the
// request then goes to the handler as usual (a memory miss: SQLite, parsing).
// Same rules as kInline: microseconds, no I/O, no lock held long, no throw
// (one that throws falls through to the handler). A response that would be
// zstd-compressed for the client is compressed on the worker pool, never on
// the loop.
using FastPath = std::function<std::optional<Response>(const Request& request)>;

// Adapts a function that returns its Response directly.
inline Handler SyncHandler(std::function<Response(const Request&)> fn) {
  return [fn = std::move(fn)](Request request, Responder respond) { respond(fn(request)); };
}

}  // namespace kiln::http
