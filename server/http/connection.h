// Internal to kiln_http: one accepted TCP connection.
//
// Following libuv's examples, a Connection owns its TCP and timer handles,
// its llhttp parser and its buffers; each write owns its bytes (and holds the
// shared response bodies) until its callback. Lives on the loop thread only.
// The ServerLoop owns Connections; Close() starts closing the handles and
// the ServerLoop destroys the Connection once both have closed.
//
// Requests are answered in arrival order through a pipeline of slots: a
// request takes a slot when it is complete, its handler fills the slot, and
// the ready slots at the head are written together with one writev.
#pragma once

#include <llhttp.h>
#include <uv.h>

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "server/http/json_response.h"
#include "server/http/request.h"
#include "server/http/responder.h"
#include "server/http/response_channel.h"

namespace kiln::http::internal {

class ServerLoop;
class Connection;

// A connection's place in its loop's lists of idle and busy connections
// (ServerLoop::UpdateIdle); kept by the connection, set by the loop.
struct IdleListPlace {
  std::list<Connection*>::iterator position;
  bool listed = false;  // in one of the lists
  bool idle = false;    // in the idle one
};

class Connection {
 public:
  Connection(ServerLoop& server, uint64_t id);
  ~Connection();

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Initializes the handles and accepts a pending connection on `listener`,
  // then starts reading. On failure the caller must still call Close().
  Status Accept(uv_stream_t* listener);

  // A handler's answer for the request in slot `completion.sequence`.
  void Deliver(Completion completion);

  // Shutdown: no new requests; close once the answered ones are written.
  void BeginDrain();
  // Closes now; idempotent. Pending writes are cancelled. Requests still
  // unanswered are logged with status 499 (the client went away) by Close,
  // or 503 (the server gave up on them at shutdown) by Abort.
  void Close();
  void Abort();

  static constexpr int kClientClosedStatus = 499;

  uint64_t id() const { return id_; }
  // A keep-alive connection waiting for its next request with nothing in
  // flight (or a new one that has sent nothing yet): one the server may
  // close to make room for another.
  bool IsIdle() const;
  // Tells the ServerLoop whether the connection is idle now.
  void RefreshIdle();

 private:
  // One request's place in the pipeline, from dispatch until written.
  struct Slot {
    uint64_t sequence = 0;
    bool ready = false;
    bool head = false;  // HEAD: the body is not written
    bool keep_alive = true;
    bool http10 = false;
    std::string_view method;  // static string from llhttp
    std::string target;
    std::string_view route;  // owned by the Router, or "-"
    uint64_t start_ns = 0;
    Response response;
    WireBody wire;
    std::shared_ptr<CancelSignal> cancel;  // a worker-pool handler's; set if its client leaves
  };

  // One uv_write. Owns the heads of every response it carries (one
  // buffer) and holds their bodies until written; bodies are never copied.
  // A finished one is kept as the spare, so steady traffic reuses its
  // buffers instead of allocating.
  struct WriteRequest {
    uv_write_t req{};
    Connection* connection = nullptr;
    std::string heads;
    struct Part {
      size_t head_end = 0;                   // offset in `heads` where this response's head ends
      Bytes body;                            // null: head only
    };
    std::vector<Part> parts;
    std::vector<uv_buf_t> bufs;

    void Clear() {
      heads.clear();
      parts.clear();
      bufs.clear();
    }
  };

  // The request being received.
  struct Incoming {
    bool active = false;  // between message begin and message complete
    uint64_t start_ns = 0;
    size_t header_bytes = 0;
    std::string field;
    std::string value;
    Request request;
  };

  // connection_parser.cc: llhttp callbacks and request assembly.
  static const llhttp_settings_t& ParserSettings();
  static int OnMessageBegin(llhttp_t* parser);
  static int OnUrl(llhttp_t* parser, const char* at, size_t length);
  static int OnHeaderField(llhttp_t* parser, const char* at, size_t length);
  static int OnHeaderValue(llhttp_t* parser, const char* at, size_t length);
  static int OnHeaderValueComplete(llhttp_t* parser);
  static int OnHeadersComplete(llhttp_t* parser);
  static int OnChunkHeader(llhttp_t* parser);
  static int OnBody(llhttp_t* parser, const char* at, size_t length);
  static int OnMessageComplete(llhttp_t* parser);
  int CountHeaderBytes(size_t length);
  int Reject(Error error);
  int HandleHeadersComplete();
  int HandleMessageComplete();
  void Dispatch(Request request, Slot& slot);
  // Answers from a route's fast path; compression, if due, goes to the pool.
  void FinishFromFastPath(Slot& slot, const ResponseTicket& ticket, Response response);
  void SendContinue();

  // connection.cc: reading, timers, closing; connection_writer.cc: responses.
  static void OnAlloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void OnWrite(uv_write_t* req, int status);
  static void OnTimer(uv_timer_t* timer);
  static void OnShutdown(uv_shutdown_t* req, int status);
  static void OnClosed(uv_handle_t* handle);
  void Consume(const char* data, size_t size);
  void Parse(const char* data, size_t size);
  // The last byte other than SP or HTAB before `at`, a pointer into what
  // Parse is parsing (looking back into earlier input when needed); 0 before
  // any input. RememberLastNonBlank records that of consumed input.
  char LastNonBlankBefore(const char* at) const;
  void RememberLastNonBlank(const char* begin, const char* end);
  // Whether `at`, a pointer into what Parse is parsing, is a CR or LF
  // (false at the end of that input).
  bool EndsRequestLine(const char* at) const;
  void HandleEof();
  bool CanAcceptMore() const;
  // Resumes a paused parse when there is room, then starts or stops reading.
  void UpdateReading();
  void UpdateTimer();
  void HandleTimeout();
  Slot& AddSlot();
  void Finish(Slot& slot, Response response);    // fills a slot on the loop thread
  void FinishWithError(const Error& error);      // answers and stops reading
  void Flush();
  void AfterWrites();
  void StartLingeringClose();
  void CloseWithUnanswered(int status);
  void CancelUnanswered();  // tells the handlers still working that nobody will read

  ServerLoop& server_;
  const uint64_t id_;
  std::string peer_;
  uv_tcp_t tcp_{};
  uv_timer_t timer_{};
  llhttp_t parser_{};
  int open_handles_ = 0;

  Incoming incoming_;
  std::optional<Error> rejection_;      // set by a callback that refused the request
  std::string paused_input_;            // bytes after a pause, parsed on resume
  const char* input_begin_ = nullptr;   // what llhttp_execute is parsing now
  const char* input_end_ = nullptr;     // and its end
  char last_nonblank_ = 0;              // the last non-blank byte parsed before it
  bool parser_paused_ = false;          // pipeline full: resume when it drains

  std::deque<Slot> pipeline_;
  uint64_t next_sequence_ = 0;
  bool in_read_callback_ = false;  // defer Flush until the read is parsed
  size_t writes_in_flight_ = 0;
  std::unique_ptr<WriteRequest> spare_write_;
  uint64_t last_write_ns_ = 0;

  bool reading_ = false;
  bool eof_ = false;
  bool no_more_requests_ = false;  // after Connection: close, an error, or drain
  bool linger_on_close_ = false;   // unread input may remain: close by lingering
  bool lingering_ = false;         // write side shut; discarding input until EOF
  bool closing_ = false;
  IdleListPlace idle_place_;
};

}  // namespace kiln::http::internal
