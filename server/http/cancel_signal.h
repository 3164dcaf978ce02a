// CancelSignal: tells a handler that its client has gone away.
//
// The transport gives every request it hands to the worker pool one signal
// (Request::cancel) and sets it when the request's connection closes, is
// reset or half-closed by the client (EOF) before the answer has been
// written, or is closed at the end of a shutdown's grace period: nobody will
// read the answer, so long work (an execute) may stop. Inline handlers and
// fast paths answer at once and get none. Thread-safe: set on the loop
// thread, read anywhere with one relaxed atomic load.
#pragma once

#include <atomic>

namespace kiln::http {

class CancelSignal {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
};

}  // namespace kiln::http
