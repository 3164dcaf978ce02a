// Request framing is strict: every way a proxy and kiln could disagree on
// where a request ends is refused at once with a JSON error, and the
// connection is closed. Through a real socket.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "server/http/http_server.h"
#include "server/http/testing/raw_http_client.h"
#include "server/http/testing/test_server.h"

namespace kiln::http {
namespace {

using namespace std::chrono_literals;
using testing::MakeRequest;
using testing::RawHttpClient;
using testing::RawResponse;

class HttpServerFramingTest : public ::testing::Test {
 protected:
  // testing::CountingEchoRouter: POST /body and GET /echo.
  void SetUp() override {
    HttpServerOptions options = testing::TestOptions();
    // Far beyond the client's 5 s read timeout: an answer that arrives was
    // not the request timeout's 408.
    options.request_timeout = 120s;
    options.max_body_bytes = 1 << 20;
    server_ = testing::StartServer(std::move(options), testing::CountingEchoRouter(handler_calls_));
    ASSERT_NE(server_, nullptr);
  }

  RawHttpClient Connect() { return testing::ConnectOrFail(server_->port()); }

  // Sends `request` (without reading further input from it) and expects
  // the refusal: `status`, a JSON error `code` whose message contains
  // `message_part`, and the connection closed.
  void ExpectRefused(std::string_view request, int status, std::string_view code,
                     std::string_view message_part) {
    SCOPED_TRACE(std::string(request));
    RawHttpClient client = Connect();
    Result<RawResponse> response = client.RoundTrip(request);
    ASSERT_TRUE(response) << response.error().message;
    EXPECT_EQ(response->status, status) << response->body;
    nlohmann::json error = nlohmann::json::parse(response->body)["error"];
    EXPECT_EQ(error["code"], code);
    EXPECT_NE(error["message"].get<std::string>().find(message_part), std::string::npos)
        << error["message"];
    EXPECT_EQ(response->headers.Get("Connection"), "close");
    EXPECT_TRUE(client.WaitForClose());
  }

  std::atomic<int> handler_calls_{0};
  std::unique_ptr<HttpServer> server_;
};

constexpr std::string_view kChunkedHead =
    "POST /body HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";

TEST_F(HttpServerFramingTest, ChunkDataOverrunningItsSizeIs400AtOnce) {
  // "abcabc" after a 3-byte chunk: a lenient parser skips to the next line
  // and reads "abc" as the next chunk's size, then waits for 0xabc bytes.
  ExpectRefused(std::string(kChunkedHead) + "3\r\nabcabc\r\n0\r\n\r\n", 400, "bad_request",
                "CRLF after chunk");
  ExpectRefused(std::string(kChunkedHead) + "3\r\nabcdefgh\r\n0\r\n\r\n", 400, "bad_request",
                "CRLF after chunk");
  EXPECT_EQ(handler_calls_.load(), 0);
}

TEST_F(HttpServerFramingTest, ChunkSizeBeyondTheBodyLimitIs413BeforeItsData) {
  // Only the size line is sent: the answer cannot have waited for the data.
  ExpectRefused(std::string(kChunkedHead) + "FFFFFFFF\r\n", 413, "payload_too_large",
                "4294967295 bytes");
  // Past the limit only together with what came before.
  std::string first(600 << 10, 'a');
  ExpectRefused(std::string(kChunkedHead) + "96000\r\n" + first + "\r\n96000\r\n", 413,
                "payload_too_large", "after 614400");
  EXPECT_EQ(handler_calls_.load(), 0);
}

TEST_F(HttpServerFramingTest, HeaderNamesWithSpacesAre400) {
  ExpectRefused("GET /echo HTTP/1.1\r\nHost: t\r\nBad Name: x\r\n\r\n", 400, "bad_request",
                "Invalid header");
  ExpectRefused("GET /echo HTTP/1.1\r\nHost: t\r\nContent-Length : 0\r\n\r\n", 400,
                "bad_request", "Invalid header");
}

TEST_F(HttpServerFramingTest, ObsFoldLinesAre400) {
  ExpectRefused("GET /echo HTTP/1.1\r\nHost: t\r\nX-A: x\r\n  folded\r\n\r\n", 400,
                "bad_request", "'X-A' is continued on the next line");
  ExpectRefused("GET /echo HTTP/1.1\r\nHost: t\r\nX-Empty:\r\n\tfolded\r\n\r\n", 400,
                "bad_request", "'X-Empty' is continued");
  // The fold arriving in a read of its own.
  RawHttpClient client = Connect();
  ASSERT_TRUE(client.Send("GET /echo HTTP/1.1\r\nHost: t\r\nX-A: x\r\n"));
  std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(client.Send(" \t folded\r\n\r\n"));
  Result<RawResponse> response = client.ReadResponse();
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 400) << response->body;
}

TEST_F(HttpServerFramingTest, AmbiguousContentLengthsAre400) {
  ExpectRefused(
      "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n0\r\n\r\n",
      400, "bad_request", "Content-Length can't be present with Transfer-Encoding");
  ExpectRefused(
      "POST /body HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"
      "3\r\nabc\r\n0\r\n\r\n",
      400, "bad_request", "Content-Length can't be present with Transfer-Encoding");
  ExpectRefused(
      "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 400,
      "bad_request", "Duplicate Content-Length");
  ExpectRefused(
      "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde",
      400, "bad_request", "Duplicate Content-Length");
  ExpectRefused("POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 3, 3\r\n\r\nabc", 400,
                "bad_request", "Content-Length");
  ExpectRefused("POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: -3\r\n\r\nabc", 400,
                "bad_request", "Content-Length");
  ExpectRefused("POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999999999999999\r\n\r\n",
                400, "bad_request", "Content-Length");
  EXPECT_EQ(handler_calls_.load(), 0);
}

TEST_F(HttpServerFramingTest, AContentLengthShorterThanTheBodyLeavesGarbageThatIs400) {
  RawHttpClient client = Connect();
  Result<RawResponse> first =
      client.RoundTrip("POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc\x01\x02");
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(first->body, "abc");
  Result<RawResponse> rest = client.ReadResponse();
  ASSERT_TRUE(rest) << rest.error().message;
  EXPECT_EQ(rest->status, 400);
  EXPECT_TRUE(client.WaitForClose());
}

TEST_F(HttpServerFramingTest, TransferCodingsOtherThanChunkedAreRefused) {
  ExpectRefused(
      "POST /body HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501,
      "not_implemented", "Transfer-Encoding 'gzip, chunked' is not supported");
  ExpectRefused("POST /body HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: identity\r\n\r\nabc", 501,
                "not_implemented", "Transfer-Encoding 'identity'");
  ExpectRefused("POST /body HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
                "bad_request", "not allowed in an HTTP/1.0 request");
  EXPECT_EQ(handler_calls_.load(), 0);
}

TEST_F(HttpServerFramingTest, HostMustAppearExactlyOnceInHttp11) {
  ExpectRefused("GET /echo HTTP/1.1\r\n\r\n", 400, "bad_request", "needs a Host");
  ExpectRefused("GET /echo HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "bad_request",
                "2 Host header fields");
  RawHttpClient client = Connect();
  Result<RawResponse> http10 = client.RoundTrip("GET /echo HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(http10) << http10.error().message;
  EXPECT_EQ(http10->status, 200);
}

TEST_F(HttpServerFramingTest, RequestLinesWithoutAVersionAre400AtOnce) {
  // Strict llhttp would read these as HTTP/0.9 and wait for a header section.
  ExpectRefused("GET /echo\r\n", 400, "bad_request", "no HTTP version");
  ExpectRefused("POST /body\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc", 400, "bad_request",
                "no HTTP version");
  // The target split over two reads, its line end in the second.
  RawHttpClient client = Connect();
  ASSERT_TRUE(client.Send("GET /ec"));
  std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(client.Send("ho\n"));
  Result<RawResponse> response = client.ReadResponse();
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 400) << response->body;
  EXPECT_EQ(handler_calls_.load(), 0);
}

TEST_F(HttpServerFramingTest, EmptyHeaderNamesAndRepeatedContentTypesAre400) {
  ExpectRefused("GET /echo HTTP/1.1\r\nHost: t\r\n: v\r\n\r\n", 400, "bad_request", "empty name");
  ExpectRefused(
      "POST /body HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Type: image/png\r\n"
      "Content-Length: 3\r\n\r\nabc",
      400, "bad_request", "2 Content-Type header fields");
  EXPECT_EQ(handler_calls_.load(), 0);
}

TEST_F(HttpServerFramingTest, WellFramedChunkedBodiesStillWork) {
  RawHttpClient client = Connect();
  Result<RawResponse> response =
      client.RoundTrip(std::string(kChunkedHead) + "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "abcde");
  Result<RawResponse> again = client.RoundTrip(MakeRequest("POST", "/body", "xyz"));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->body, "xyz");
}

}  // namespace
}  // namespace kiln::http
