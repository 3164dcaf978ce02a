// The one-shot callback through which a handler answers its request.
//
// Callable from any thread: on the loop thread the response is delivered at
// once (the fast path for inline handlers); elsewhere it is queued and the
// loop is woken with uv_async_send. Response bodies are zstd-compressed on
// the calling thread when the client accepts it, so big bodies built on a
// worker are never compressed on the loop. A Responder is move-only; calls
// after the first are ignored; destroying one that never answered sends 500.
// If the connection or the server has gone away, the response is dropped.
#pragma once

#include <cstdint>
#include <memory>

#include "server/http/response.h"

namespace kiln::http {

namespace internal {
class ResponseChannel;
}

// Where a response goes and what its client negotiated. Plain data.
struct ResponseTicket {
  uint64_t connection_id = 0;
  uint64_t sequence = 0;      // the request's place in its connection's pipeline
  bool accepts_zstd = false;  // Accept-Encoding lists zstd
  bool head = false;          // HEAD: the body is not sent, so never compressed
};

class Responder {
 public:
  Responder() = default;  // answers nothing
  Responder(std::shared_ptr<internal::ResponseChannel> channel, ResponseTicket ticket);
  Responder(Responder&& other) noexcept;
  Responder& operator=(Responder&& other) noexcept;
  ~Responder();

  void operator()(Response response);

  // True until the response has been sent (or for a default-constructed one, never).
  explicit operator bool() const { return channel_ != nullptr; }

 private:
  std::shared_ptr<internal::ResponseChannel> channel_;
  ResponseTicket ticket_;
};

}  // namespace kiln::http
