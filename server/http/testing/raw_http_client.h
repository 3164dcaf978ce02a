// A blocking HTTP/1.1 client over a raw POSIX socket, for tests.
//
// It writes exactly the bytes a test gives it (pipelining, chunking,
// truncation, slow senders) and reads responses framed by Content-Length.
// Every read and write is bounded by the timeout given to Connect, so a
// misbehaving server fails a test instead of hanging it. Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "server/http/header_map.h"

namespace kiln::http::testing {

struct RawResponse {
  int status = 0;
  HeaderMap headers;
  std::string body;
};

class RawHttpClient {
 public:
  static Result<RawHttpClient> Connect(uint16_t port,
                                       std::chrono::milliseconds timeout = std::chrono::seconds(5));
  RawHttpClient(RawHttpClient&& other) noexcept;
  RawHttpClient& operator=(RawHttpClient&& other) noexcept;
  ~RawHttpClient();

  Status Send(std::string_view bytes);
  // Half-closes: the server sees EOF but can still answer.
  void ShutdownWrite();
  // Closes abortively (RST): the server's next write fails.
  void Reset();

  // Reads one response (an interim 1xx included). With `head_request` the
  // body is not read whatever Content-Length says.
  Result<RawResponse> ReadResponse(bool head_request = false);

  // True when the server closes (EOF or reset) within the timeout; bytes
  // that arrive meanwhile are kept for ReadResponse.
  bool WaitForClose();

  // Sends `request` and reads its response.
  Result<RawResponse> RoundTrip(std::string_view request, bool head_request = false);

 private:
  explicit RawHttpClient(int fd) : fd_(fd) {}
  // Appends at least one byte to buffer_; fails on timeout, EOF or error.
  Status Fill();

  int fd_ = -1;
  std::string buffer_;  // read but not yet consumed
};

// "GET /path HTTP/1.1\r\nHost: test\r\n<extra>\r\n" plus a Content-Length body
// when `body` is non-empty or the method is POST/PUT.
std::string MakeRequest(std::string_view method, std::string_view target,
                        std::string_view body = {}, std::string_view extra_headers = {});

// One request on a new connection to 127.0.0.1:`port` (MakeRequest's
// bytes), bounded by `timeout`; the error says whether connecting or the
// round trip failed.
Result<RawResponse> RoundTripOnce(uint16_t port, std::string_view method, std::string_view target,
                                  std::string_view body = {}, std::string_view extra_headers = {},
                                  std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace kiln::http::testing
