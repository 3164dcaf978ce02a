// ServerLoop: accepting connections under the server's connection cap.
//
// A new connection is admitted while the server holds fewer than
// max_connections. At the cap, this loop closes its longest-idle keep-alive
// connection (a client that waits for nothing loses least: HTTP clients
// retry a request on a keep-alive connection the server closed) and admits
// the newcomer in its place; with none idle here, another loop that has one
// is asked to close its own (ServerCore::AdmitBySheddingElsewhere), so the
// loops' shares of the cap never freeze; with none idle anywhere the
// newcomer is answered 503 and closed. When accept() itself fails for want
// of descriptors, an idle connection is closed the same way; with none,
// the listener pauses rather than let libuv retry accept() in a busy loop,
// and resumes when a connection closes or after kAcceptPause.
#include "server/http/connection.h"
#include "server/http/json_response.h"
#include "server/http/response_head.h"
#include "server/http/server_loop.h"
#include "base/str_cat.h"

namespace kiln::http::internal {
namespace {

constexpr std::chrono::milliseconds kAcceptPause{100};

}  // namespace

bool ServerLoop::Admit() {
  if (core_.TryAdmitConnection()) return true;
  if (ShedOldestIdle()) {
    // A swap: the newcomer takes the slot the idle one left, whatever
    // another loop did meanwhile.
    core_.AdmitInPlaceOfShed();
    return true;
  }
  return core_.AdmitBySheddingElsewhere(*this);
}

void ServerLoop::Accept(uv_stream_t* server) {
  if (!Admit()) {
    Refuse(server);
    return;
  }
  uint64_t id = next_connection_id_++;
  auto connection = std::make_unique<Connection>(*this, id);
  Connection* raw = connection.get();
  connections_.emplace(id, std::move(connection));
  core_.open_connections().Add(1);
  if (!raw->Accept(server)) {
    raw->Close();  // may destroy `raw`; nothing touches it afterwards
    return;
  }
  core_.accepted_connections().Increment();
}

void ServerLoop::HandleAcceptError(int status) {
  core_.accept_errors().WithLabels({uv_err_name(status)}).Increment();
  // Out of descriptors: closing an idle connection frees one for the
  // accept libuv retries next; with none idle here, another loop's will
  // (this listener pauses meanwhile).
  if ((status == UV_EMFILE || status == UV_ENFILE)) {
    if (ShedOldestIdle()) return;
    core_.AskAnotherLoopToShed(*this);
  }
  core_.accept_pauses().Increment();
  listener_.Pause(kAcceptPause);
}

bool ServerLoop::ShedOldestIdle() {
  while (!idle_.empty()) {
    Connection* oldest = idle_.front();
    if (!oldest->IsIdle()) {  // stale: it got busy since it last said
      oldest->RefreshIdle();  // takes it off the list
      continue;
    }
    core_.shed_connections().Increment();
    oldest->Close();  // leaves the list and the count through OnConnectionClosing
    return true;
  }
  return false;
}

void ServerLoop::Refuse(uv_stream_t* server) {
  core_.refused_connections().Increment();
  auto* tcp = new uv_tcp_t;
  uv_tcp_init(&loop_, tcp);
  // Accept even so: a pending connection left unaccepted stops libuv's
  // listener.
  if (uv_accept(server, reinterpret_cast<uv_stream_t*>(tcp)) == 0) {
    Response response =
        ErrorResponse(UnavailableError(StrCat("the server holds its maximum of ", core_.options().max_connections,
                                              " connections and none is idle; retry later"))
                          .WithReason("overloaded")
                          .RetryAfter(core_.options().retry_after_seconds));
    std::string bytes = SerializeHead(response, WireBody{response.body, false},
                                      HeadOptions{.keep_alive = false, .date = Date()}) +
                        std::string(*response.body);
    uv_buf_t buffer = uv_buf_init(bytes.data(), static_cast<unsigned>(bytes.size()));
    // Best effort: a fresh socket's send buffer takes it whole, or the
    // client sees the connection close.
    uv_try_write(reinterpret_cast<uv_stream_t*>(tcp), &buffer, 1);
  }
  uv_close(reinterpret_cast<uv_handle_t*>(tcp),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_tcp_t*>(handle); });
}

void ServerLoop::UpdateIdle(Connection& connection, IdleListPlace& place) {
  const bool idle = connection.IsIdle();
  if (!place.listed) {
    std::list<Connection*>& list = idle ? idle_ : busy_;
    place.position = list.insert(list.end(), &connection);
    place.listed = true;
    place.idle = idle;
  } else if (idle != place.idle) {
    if (idle && core_.OverCap()) {
      // A newcomer was admitted past the cap while no connection was idle
      // yet (AdmitBySheddingElsewhere): the first to fall idle makes room.
      core_.shed_connections().Increment();
      connection.Close();
      return;
    }
    if (idle) {
      idle_.splice(idle_.end(), busy_, place.position);
    } else {
      busy_.splice(busy_.end(), idle_, place.position);
    }
    place.idle = idle;
  } else {
    return;
  }
  idle_count_.store(idle_.size(), std::memory_order_relaxed);
}

void ServerLoop::OnConnectionClosing(IdleListPlace& place) {
  if (place.listed) (place.idle ? idle_ : busy_).erase(place.position);
  place.listed = false;
  idle_count_.store(idle_.size(), std::memory_order_relaxed);
  core_.ReleaseConnection();
  listener_.Resume();  // a descriptor came back
}

}  // namespace kiln::http::internal
