#include "server/http/response_channel.h"

#include "base/str_cat.h"

namespace kiln::http::internal {

Status ResponseChannel::Open(uv_loop_t* loop, DeliverFn deliver) {
  deliver_ = std::move(deliver);
  async_.data = this;
  if (int rc = uv_async_init(loop, &async_, &ResponseChannel::OnAsync); rc != 0) {
    return ErrnoError(-rc, StrCat("uv_async_init: ", uv_strerror(rc)));
  }
  SetLoopThread();
  std::lock_guard lock(mu_);
  open_ = true;
  return Ok();
}

void ResponseChannel::Close() {
  std::vector<Completion> dropped;
  {
    std::lock_guard lock(mu_);
    if (!open_) return;
    open_ = false;
    dropped.swap(pending_);
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&async_), nullptr);
}

void ResponseChannel::Post(Completion completion) {
  if (std::this_thread::get_id() == loop_thread_) {
    bool open;
    {
      std::lock_guard lock(mu_);
      open = open_;
    }
    if (open) deliver_(std::move(completion));
    return;
  }
  std::lock_guard lock(mu_);
  if (!open_) return;
  pending_.push_back(std::move(completion));
  // Under the lock, so Close cannot close the handle between the check and
  // the send. uv_async_send coalesces wake-ups.
  if (pending_.size() == 1) uv_async_send(&async_);
}

void ResponseChannel::OnAsync(uv_async_t* handle) {
  static_cast<ResponseChannel*>(handle->data)->DrainPending();
}

void ResponseChannel::DrainPending() {
  std::vector<Completion> batch;
  {
    std::lock_guard lock(mu_);
    batch.swap(pending_);
  }
  for (Completion& completion : batch) deliver_(std::move(completion));
}

}  // namespace kiln::http::internal
