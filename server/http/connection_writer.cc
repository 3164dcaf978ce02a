// Connection: the response pipeline, writes and closing after the last one.
#include <algorithm>
#include <memory>
#include <vector>

#include "server/http/connection.h"
#include "server/http/response_head.h"
#include "server/http/server_loop.h"

namespace kiln::http::internal {
namespace {

// How long a connection closing with unread input keeps discarding it, so the
// client reads our last response instead of a reset.
constexpr uint64_t kLingerMs = 2000;

uv_buf_t BufferOf(std::string_view bytes) {
  return uv_buf_init(const_cast<char*>(bytes.data()), static_cast<unsigned>(bytes.size()));
}

}  // namespace

Connection::~Connection() = default;

Connection::Slot& Connection::AddSlot() {
  Slot& slot = pipeline_.emplace_back();
  slot.sequence = next_sequence_++;
  return slot;
}

void Connection::Finish(Slot& slot, Response response) {
  slot.wire = WireBody{response.body, false};
  slot.response = std::move(response);
  slot.ready = true;
}

void Connection::FinishWithError(const Error& error) {
  Slot& slot = AddSlot();
  slot.method = incoming_.request.method.empty()
                    ? std::string_view("-")
                    : llhttp_method_name(static_cast<llhttp_method_t>(parser_.method));
  slot.target = incoming_.request.target.substr(0, 256);
  slot.route = "-";
  slot.start_ns = incoming_.active ? incoming_.start_ns : uv_hrtime();
  slot.keep_alive = false;
  Finish(slot, ErrorResponse(error));
  incoming_ = Incoming{};
  rejection_.reset();
  no_more_requests_ = true;
  linger_on_close_ = true;  // the rest of the request may still be on its way
  parser_paused_ = false;
  paused_input_.clear();
}

void Connection::Deliver(Completion completion) {
  if (closing_ || pipeline_.empty()) return;
  uint64_t first = pipeline_.front().sequence;
  if (completion.sequence < first || completion.sequence - first >= pipeline_.size()) return;
  Slot& slot = pipeline_[completion.sequence - first];
  if (slot.ready) return;
  slot.response = std::move(completion.response);
  slot.wire = std::move(completion.wire);
  slot.ready = true;
  if (in_read_callback_) return;  // Consume flushes once the read is parsed
  Flush();
  UpdateReading();
  UpdateTimer();
}

void Connection::Flush() {
  if (closing_ || in_read_callback_) return;
  if (pipeline_.empty() || !pipeline_.front().ready) return;
  std::unique_ptr<WriteRequest> write =
      spare_write_ ? std::move(spare_write_) : std::make_unique<WriteRequest>();
  write->connection = this;
  uint64_t now = uv_hrtime();
  std::string_view date = server_.Date();
  // Every ready response at the head of the pipeline goes out in one writev.
  while (!pipeline_.empty() && pipeline_.front().ready) {
    Slot& slot = pipeline_.front();
    const Response& response = slot.response;
    HeadOptions head{
        .keep_alive = slot.keep_alive, .http10 = slot.http10, .head = slot.head, .date = date};
    AppendHead(response, slot.wire, head, write->heads);
    WriteRequest::Part& part = write->parts.emplace_back();
    part.head_end = write->heads.size();
    size_t body_bytes = 0;
    if (!slot.head && !StatusHasNoBody(response.status) && slot.wire.bytes &&
        !slot.wire.bytes->empty()) {
      part.body = slot.wire.bytes;
      body_bytes = part.body->size();
    }
    server_.RecordRequest(AccessRecord{
        .peer = peer_,
        .method = slot.method,
        .target = slot.target,
        .route = slot.route,
        .status = response.status,
        .body_bytes = body_bytes,
        .seconds = static_cast<double>(now - slot.start_ns) * 1e-9,
        .zstd = slot.wire.zstd,
    });
    bool last = !slot.keep_alive;
    pipeline_.pop_front();
    if (last) {
      no_more_requests_ = true;
      pipeline_.clear();  // nothing follows a response that closes
      break;
    }
  }
  // Only now that `heads` stops growing can buffers point into it.
  size_t head_start = 0;
  for (const WriteRequest::Part& part : write->parts) {
    write->bufs.push_back(
        BufferOf(std::string_view(write->heads).substr(head_start, part.head_end - head_start)));
    head_start = part.head_end;
    if (part.body) write->bufs.push_back(BufferOf(*part.body));
  }
  WriteRequest* raw = write.release();
  raw->req.data = raw;
  int rc = uv_write(&raw->req, reinterpret_cast<uv_stream_t*>(&tcp_), raw->bufs.data(),
                    static_cast<unsigned>(raw->bufs.size()), &Connection::OnWrite);
  if (rc != 0) {
    delete raw;
    Close();
    return;
  }
  ++writes_in_flight_;
  last_write_ns_ = now;
}

void Connection::SendContinue() {
  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  std::unique_ptr<WriteRequest> write =
      spare_write_ ? std::move(spare_write_) : std::make_unique<WriteRequest>();
  write->connection = this;
  write->bufs.push_back(BufferOf(kContinue));
  WriteRequest* raw = write.release();
  raw->req.data = raw;
  if (uv_write(&raw->req, reinterpret_cast<uv_stream_t*>(&tcp_), raw->bufs.data(), 1,
               &Connection::OnWrite) != 0) {
    delete raw;
    return;  // the read side will notice the broken socket
  }
  ++writes_in_flight_;
  last_write_ns_ = uv_hrtime();
}

void Connection::OnWrite(uv_write_t* req, int status) {
  std::unique_ptr<WriteRequest> write(static_cast<WriteRequest*>(req->data));
  Connection* connection = write->connection;
  write->Clear();  // releases the bodies
  if (!connection->spare_write_) connection->spare_write_ = std::move(write);
  --connection->writes_in_flight_;
  if (connection->closing_) return;
  if (status < 0) {
    connection->Close();
    return;
  }
  connection->last_write_ns_ = uv_hrtime();
  connection->AfterWrites();
}

void Connection::AfterWrites() {
  if (writes_in_flight_ == 0 && pipeline_.empty() && no_more_requests_) {
    if (linger_on_close_ && !eof_) {
      StartLingeringClose();
    } else {
      Close();
    }
    return;
  }
  UpdateReading();
  UpdateTimer();
}

void Connection::StartLingeringClose() {
  if (lingering_ || closing_) return;
  lingering_ = true;
  auto* shutdown = new uv_shutdown_t;
  shutdown->data = this;
  if (uv_shutdown(shutdown, reinterpret_cast<uv_stream_t*>(&tcp_), &Connection::OnShutdown) != 0) {
    delete shutdown;
    Close();
    return;
  }
  uint64_t linger_ms = std::min<uint64_t>(
      kLingerMs, static_cast<uint64_t>(server_.options().request_timeout.count()));
  uv_timer_start(&timer_, &Connection::OnTimer, linger_ms, 0);
  UpdateReading();
}

void Connection::OnShutdown(uv_shutdown_t* req, int status) {
  auto* connection = static_cast<Connection*>(req->data);
  delete req;
  if (status < 0 && status != UV_ECANCELED) connection->Close();
}

}  // namespace kiln::http::internal
