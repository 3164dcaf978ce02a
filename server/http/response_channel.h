// Internal to kiln_http: carries finished responses to the loop thread.
//
// Owned by the server (shared with every outstanding Responder). Open and
// Close run on the loop thread; Post is thread-safe. After Close, posted
// responses are dropped: their connection is gone with the loop.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "base/status.h"
#include "server/http/content_coding.h"
#include "server/http/response.h"

namespace kiln::http::internal {

struct Completion {
  uint64_t connection_id = 0;
  uint64_t sequence = 0;
  Response response;
  WireBody wire;  // what goes on the socket after the head
};

class ResponseChannel {
 public:
  using DeliverFn = std::function<void(Completion)>;

  explicit ResponseChannel(CompressionPolicy policy) : policy_(policy) {}

  // Starts the async handle on `loop`; `deliver` then runs on the loop thread
  // for every completion. Call from the thread that will run the loop.
  Status Open(uv_loop_t* loop, DeliverFn deliver);
  // Marks the calling thread as the loop thread (for Run on a new thread).
  void SetLoopThread() { loop_thread_ = std::this_thread::get_id(); }
  // Stops delivery and closes the async handle (loop thread).
  void Close();

  void Post(Completion completion);

  const CompressionPolicy& policy() const { return policy_; }

 private:
  static void OnAsync(uv_async_t* handle);
  void DrainPending();

  const CompressionPolicy policy_;
  uv_async_t async_{};
  DeliverFn deliver_;            // loop thread only
  std::thread::id loop_thread_;  // set before the loop runs
  std::mutex mu_;
  bool open_ = false;                // guarded by mu_
  std::vector<Completion> pending_;  // guarded by mu_
};

}  // namespace kiln::http::internal
