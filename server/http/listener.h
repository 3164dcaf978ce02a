// Internal to kiln_http: one loop's listening socket, which can pause.
//
// When accept() fails for want of descriptors (EMFILE, ENFILE) or memory,
// libuv reports the error and tries again at once, in a loop that only ends
// when accept() succeeds: a loop thread with nothing to free would spin
// there and serve nobody. So the Listener keeps the bound socket itself and
// hands libuv a duplicate: Pause closes the duplicate (which ends libuv's
// loop and frees a descriptor) while the kernel keeps queueing connections
// on the socket, and Resume listens again on a fresh duplicate.
//
// Owned by a ServerLoop; loop thread only, except that Open may run before
// the loop runs on any one thread.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>

#include "base/status.h"

namespace kiln::http::internal {

class Listener {
 public:
  // A connection to take now with uv_accept(server, ...), or an accept
  // error (a negative libuv status) that the callback may answer by freeing
  // a descriptor or by pausing.
  using ConnectionCallback = std::function<void(uv_stream_t* server)>;
  using ErrorCallback = std::function<void(int status)>;

  Listener() = default;
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Takes ownership of `socket` (bound, not yet listening) and listens on it
  // with the loop's handles.
  Status Open(uv_loop_t* loop, uv_os_sock_t socket, int backlog, ConnectionCallback on_connection,
              ErrorCallback on_error);
  // Stops accepting until Resume, or for at most `delay` (then resumes by
  // itself). Idempotent while paused.
  void Pause(std::chrono::milliseconds delay);
  // Accepts again now if paused (and the last pause's handle has closed).
  void Resume();
  // Stops accepting for good and closes the socket; idempotent.
  void Close();

  bool paused() const { return paused_; }
  // The bound port (0 before Open).
  uint16_t port() const;

 private:
  static void OnConnection(uv_stream_t* server, int status);
  static void OnResumeTimer(uv_timer_t* timer);
  static void OnTcpClosed(uv_handle_t* handle);
  // Listens on a new duplicate of the socket: 0, or the libuv error (no
  // descriptor to duplicate it with, say) with the Listener still paused.
  int Listen();

  uv_loop_t* loop_ = nullptr;
  uv_os_sock_t socket_ = -1;  // the bound socket; libuv gets duplicates
  int backlog_ = 0;
  ConnectionCallback on_connection_;
  ErrorCallback on_error_;
  uv_tcp_t tcp_{};            // on the current duplicate
  bool tcp_open_ = false;     // initialized and not closing
  bool tcp_closing_ = false;  // closing; reusable once closed
  uv_timer_t resume_timer_{};
  bool paused_ = false;
  bool resume_when_closed_ = false;
  bool closed_ = false;
};

}  // namespace kiln::http::internal
