// A catalogue of hostile requests against a real `kiln serve` process on
// 127.0.0.1: broken framing, lying or repeated lengths, bad chunking, huge
// request lines, headers and bodies, deep nesting, huge and negative
// dimensions, invalid UTF-8 and NUL bytes, bad encodings, bad query
// parameters, bad tensors, unknown routes and methods, slow clients. Each is
// sent on a connection of its own and must get its specific status and JSON
// error code (and a message saying what), and the server must answer
// /healthz after each and compile and run correctly after all of them.
// tests/server_bad_input_test.cc holds the cases that came first (malformed
// HLO, JSON options, content types, misspelt query parameters); the
// transport's own tests (server/http/*_test.cc) cover framing against a
// bare router.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "server/http/content_coding.h"
#include "tests/kiln_serve_process.h"
#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using http::testing::MakeRequest;
using http::testing::RawHttpClient;
using http::testing::RawResponse;
using nlohmann::json;
using testing::kAddInputs;
using testing::KilnServeProcess;
using namespace std::string_literals;

using testing::kText;
using testing::kJson;
constexpr std::string_view kSafetensors = "Content-Type: application/vnd.safetensors\r\n";
constexpr int kMaxBodyBytes = 1 << 20;  // --max-body 1MiB

constexpr const char* kFlipModule = R"(HloModule flip

ENTRY main {
  p = pred[2] parameter(0)
  ROOT n = pred[2] not(p)
}
)";

// How a case's bytes reach the server.
enum class Delivery {
  kWhole,           // all at once, then read the answers
  kThenHalfClose,   // all at once, then EOF (the client has nothing more)
  kStall,           // all at once, then silence: the request never completes
  kTrickle,         // a byte every 100 ms for the first bytes, then silence
};

struct Expected {
  int status;
  std::string_view code;
  std::string_view message_part;  // the JSON message contains it
};

struct HostileCase {
  std::string category;
  std::string name;
  std::string bytes;
  std::vector<Expected> answers;  // in order, on the one connection
  Delivery delivery = Delivery::kWhole;
};

// A safetensors file: the 8-byte little-endian header length, the header
// bytes as given (valid JSON or not) and the data.
std::string Safetensors(std::string_view header, std::string_view data) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((uint64_t{header.size()} >> (8 * i)) & 0xff);
  return out + std::string(header) + std::string(data);
}

// Two f32[2,3] tensors "0" and "1" with the descriptions given.
std::string AddInputs(const json& first, const json& second, std::string_view data) {
  return Safetensors(json{{"0", first}, {"1", second}}.dump(), data);
}

json F32Tensor(std::vector<int64_t> shape, uint64_t begin, uint64_t end, std::string_view dtype = "F32") {
  return json{{"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, end}}};
}

const std::string kFortyEightBytes(48, '\0');  // two f32[2,3] of zeros

// JSON inputs for the add module: a good parameter 0 and `second`.
std::string JsonInputs(std::string_view second) {
  return R"({"inputs": [{"shape": [2,3], "dtype": "f32", "data": [1,2,3,4,5,6]}, )" + std::string(second) + "]}";
}

std::string HloOf(std::string_view body) { return "HloModule m\n\nENTRY e {\n" + std::string(body) + "\n}\n"; }

std::string Nested(std::string_view open, std::string_view inner, std::string_view close, int depth) {
  std::string out;
  for (int i = 0; i < depth; ++i) out += open;
  out += inner;
  for (int i = 0; i < depth; ++i) out += close;
  return out;
}

std::string Post(std::string_view target, std::string_view body, std::string_view headers) {
  return MakeRequest("POST", target, body, headers);
}

// Every hostile request, by category. `add_key` names the compiled add
// module (f32[2,3] x2 -> f32[2,3]), `flip_key` the pred[2] one.
std::vector<HostileCase> Catalogue(const std::string& add_key, const std::string& flip_key) {
  std::vector<HostileCase> cases;
  auto add = [&](std::string category, std::string name, std::string bytes, int status, std::string_view code,
                 std::string_view part, Delivery delivery = Delivery::kWhole) {
    cases.push_back({std::move(category), std::move(name), std::move(bytes), {{status, code, part}}, delivery});
  };
  const std::string execute = "/v1/executables/" + add_key + "/execute";
  const std::string flip = "/v1/executables/" + flip_key + "/execute";
  const std::string compile_head = "POST /v1/compile HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\n";
  const std::string chunked_head = compile_head + "Transfer-Encoding: chunked\r\n\r\n";

  // Framing: request lines and header sections a proxy could read otherwise.
  add("framing", "request line without a version (HTTP/0.9)", "GET /healthz\r\n", 400, "bad_request",
      "no HTTP version");
  add("framing", "HTTP/0.9 line followed by headers", "POST /v1/compile\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc",
      400, "bad_request", "no HTTP version");
  add("framing", "HTTP/1.2", "GET /v1/stats HTTP/1.2\r\nHost: t\r\n\r\n", 400, "bad_request", "HTTP version");
  add("framing", "header line without a colon", "GET /v1/pool HTTP/1.1\r\nHost: t\r\nNoColon\r\n\r\n", 400,
      "bad_request", "Invalid header");
  add("framing", "header field with an empty name", "GET /v1/stats HTTP/1.1\r\nHost: t\r\n: v\r\n\r\n", 400,
      "bad_request", "empty name");
  add("framing", "lines ended by a bare LF", "GET /healthz HTTP/1.1\nHost: t\n\n", 400, "bad_request",
      "malformed HTTP request");
  add("framing", "obs-fold on a compile", compile_head + "X-A: a\r\n folded\r\nContent-Length: 1\r\n\r\nx", 400,
      "bad_request", "obs-fold");
  add("framing", "two Host fields", "GET /v1/entries HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "bad_request",
      "2 Host header fields");
  add("framing", "absolute-form target", "GET http://t/v1/stats HTTP/1.1\r\nHost: t\r\n\r\n", 400, "bad_request",
      "not an absolute path");
  add("framing", "lower-case method", "get /healthz HTTP/1.1\r\nHost: t\r\n\r\n", 400, "bad_request",
      "Invalid method");
  add("framing", "TLS ClientHello on the plain port", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"s,
      400, "bad_request", "Invalid method");
  add("framing", "HTTP/2 connection preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, "bad_request",
      "malformed HTTP request");

  // Lengths: repeated, contradicting, malformed or lying.
  add("length", "two different Content-Lengths", compile_head + "Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
      400, "bad_request", "Duplicate Content-Length");
  add("length", "Content-Length with Transfer-Encoding",
      compile_head + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "bad_request",
      "Content-Length can't be present with Transfer-Encoding");
  add("length", "signed Content-Length", compile_head + "Content-Length: +3\r\n\r\nabc", 400, "bad_request",
      "Content-Length");
  add("length", "empty Content-Length", compile_head + "Content-Length: \r\n\r\nabc", 400, "bad_request",
      "Empty Content-Length");
  add("length", "Content-Length past the body limit", compile_head + "Content-Length: 1000000000000\r\n\r\n", 413,
      "payload_too_large", "exceeds the 1048576-byte body limit");
  add("length", "Content-Length longer than the body, then EOF",
      "POST " + execute + " HTTP/1.1\r\nHost: t\r\n" + std::string(kJson) + "Content-Length: 5000\r\n\r\n{\"inputs\": [",
      400, "incomplete_request", "", Delivery::kThenHalfClose);
  cases.push_back({"length",
                   "Content-Length shorter than the body: the rest is a bad request",
                   compile_head + "Content-Length: 3\r\n\r\nabc\x01\x02",
                   {{400, "hlo_parse_error", "expected 'HloModule'"}, {400, "bad_request", "Invalid method"}}});

  // Chunking.
  add("chunking", "chunk size that is not hex", chunked_head + "zz\r\nabc\r\n0\r\n\r\n", 400, "bad_request",
      "chunk size");
  add("chunking", "chunk size overflowing 64 bits", chunked_head + "FFFFFFFFFFFFFFFFFF\r\n", 400, "bad_request",
      "Chunk size overflow");
  add("chunking", "chunk size past the body limit", chunked_head + "FFFFFFFF\r\n", 413, "payload_too_large",
      "4294967295 bytes");
  add("chunking", "chunk data overrunning its size", chunked_head + "3\r\nabcabc\r\n0\r\n\r\n", 400, "bad_request",
      "CRLF after chunk");
  add("chunking", "Transfer-Encoding gzip, chunked",
      compile_head + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501, "not_implemented",
      "'gzip, chunked' is not supported");
  add("chunking", "Transfer-Encoding chunked twice",
      compile_head + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "bad_request",
      "Transfer-Encoding");
  add("chunking", "chunked body cut off by EOF", chunked_head + "10\r\nHloModule", 400, "incomplete_request", "",
      Delivery::kThenHalfClose);
  add("chunking", "chunks adding up past the body limit",
      chunked_head + "80000\r\n" + std::string(0x80000, 'a') + "\r\n80001\r\n", 413, "payload_too_large",
      "after 524288");

  // Huge request lines, headers and bodies.
  add("huge", "URL of 100 KB", "GET /v1/entries?" + std::string(100'000, 'a') + " HTTP/1.1\r\nHost: t\r\n\r\n", 431,
      "headers_too_large", "65536 bytes");
  add("huge", "one header of 100 KB", "GET /metrics HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(100'000, 'h') +
                                          "\r\n\r\n",
      431, "headers_too_large", "65536 bytes");
  {
    std::string many = "GET /v1/pool HTTP/1.1\r\nHost: t\r\n";
    for (int i = 0; i < 20'000; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
    add("huge", "20,000 header fields", many + "\r\n", 431, "headers_too_large", "65536 bytes");
  }
  add("huge", "zstd body decoding past the body limit",
      Post("/v1/compile", http::ZstdCompress(std::string(2 * kMaxBodyBytes, 'z'), 3),
           std::string(kText) + "Content-Encoding: zstd\r\n"),
      413, "payload_too_large", "decodes to more than");
  {
    std::string query = "/v1/entries?";
    for (int i = 0; i < 3000; ++i) query += "p" + std::to_string(i) + "=1&";
    add("huge", "3,000 query parameters", MakeRequest("GET", query), 400, "invalid_query",
        "unknown query parameter 'p0'");
  }

  // Deep nesting, huge and negative dimensions.
  add("nesting", "tuple shape nested 100,000 deep",
      Post("/v1/compile", HloOf("  p = " + Nested("(", "f32[]", ")", 100'000) + " parameter(0)\n  ROOT c = f32[] "
                                                                                  "constant(0)"),
           kText),
      400, "hlo_parse_error", "nested too deeply");
  add("nesting", "JSON compile body nested 100,000 deep",
      Post("/v1/compile", "{\"hlo\": " + Nested("[", "", "]", 100'000) + "}", kJson), 400, "invalid_json",
      "'hlo' must be a string");
  add("nesting", "JSON execute input nested 10,000 deep",
      Post(execute, JsonInputs(Nested("{\"tuple\": [", "", "]}", 10'000)), kJson),
      422, "input_mismatch", "parameter 1 is f32[2,3], got a tuple");
  add("nesting", "safetensors header nested 50,000 deep",
      Post(execute, Safetensors(Nested("[", "", "]", 50'000), ""), kSafetensors), 400, "invalid_safetensors",
      "not a JSON object");
  add("dimensions", "rank 100,000", Post("/v1/compile", HloOf("  ROOT c = f32[" + Nested("1,", "1", "", 100'000) +
                                                              "] constant(0)"),
                                         kText),
      400, "hlo_parse_error", "rank exceeds 64");
  add("dimensions", "dimension past 64 bits",
      Post("/v1/compile", HloOf("  p = f32[99999999999999999999] parameter(0)\n  ROOT n = f32[99999999999999999999] "
                                "negate(p)"),
           kText),
      400, "hlo_parse_error", "integer out of range");
  add("dimensions", "negative dimension",
      Post("/v1/explain", HloOf("  p = f32[-3] parameter(0)\n  ROOT n = f32[-3] negate(p)"), kText), 400,
      "hlo_parse_error", "negative dimension size");
  add("dimensions", "a 4-exabyte parameter",
      Post("/v1/compile", HloOf("  p = f32[1000000,1000000,1000000] parameter(0)\n  ROOT n = "
                                "f32[1000000,1000000,1000000] negate(p)"),
           kText),
      422, "does_not_fit", "HBM");
  add("dimensions", "negative dimension in a JSON input",
      Post(execute, JsonInputs(R"({"shape": [-2,3], "dtype": "f32", "data": [1,2,3,4,5,6]})"), kJson),
      400, "invalid_inputs", "non-negative integers");
  add("dimensions", "safetensors shape whose size overflows",
      Post(execute, AddInputs(F32Tensor({2, 3}, 0, 24), F32Tensor({int64_t{1} << 62, 4}, 24, 48), kFortyEightBytes),
           kSafetensors),
      400, "invalid_safetensors", "overflowing size");

  // Invalid UTF-8 and NUL bytes.
  add("bytes", "invalid UTF-8 in HLO text",
      Post("/v1/compile", "HloModule m\xff\xfe\nENTRY e {\n  ROOT c = f32[] constant(0)\n}\n", kText), 400,
      "hlo_parse_error", "unexpected character '\\xff'");
  add("bytes", "NUL byte in HLO text",
      Post("/v1/explain", "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(0)\0\n}\n"s, kText), 400,
      "hlo_parse_error", "unexpected NUL byte");
  add("bytes", "invalid UTF-8 in a JSON compile body", Post("/v1/compile", "{\"hlo\": \"\xff\xfe\"}", kJson), 400,
      "invalid_json", "not valid JSON");
  add("bytes", "NUL byte in a header value", "GET /v1/stats HTTP/1.1\r\nHost: t\r\nX-A: a\0b\r\n\r\n"s,
      400, "bad_request", "Invalid header value char");
  add("bytes", "raw non-ASCII bytes in the path", "GET /v1/executables/\xff\xfe HTTP/1.1\r\nHost: t\r\n\r\n", 400,
      "bad_request", "Invalid char in url");
  add("bytes", "percent-encoded invalid UTF-8 key", MakeRequest("GET", "/v1/executables/%ff%fe"), 400, "invalid_key",
      "expected 32 lowercase hex digits");
  add("bytes", "percent-encoded NUL key", MakeRequest("DELETE", "/v1/executables/%00"), 400, "invalid_key",
      "expected 32 lowercase hex digits");
  add("bytes", "invalid UTF-8 in a safetensors header",
      Post(execute, Safetensors("{\"\xff\": {\"dtype\": \"F32\", \"shape\": [2,3], \"data_offsets\": [0,24]}}",
                                std::string(24, '\0')),
           kSafetensors),
      400, "invalid_safetensors", "header is not valid JSON");

  // Content codings and types.
  add("encoding", "Content-Encoding br on explain",
      Post("/v1/explain", testing::kAddModule, std::string(kText) + "Content-Encoding: br\r\n"), 415,
      "unsupported_content_encoding", "\"br\" is not supported");
  add("encoding", "corrupt zstd", Post("/v1/compile", "not zstd at all", "Content-Encoding: zstd\r\n"), 400,
      "bad_content_encoding", "corrupt");
  {
    std::string frame = http::ZstdCompress(testing::kAddModule, 3);
    add("encoding", "truncated zstd frame",
        Post("/v1/compile", frame.substr(0, frame.size() / 2), "Content-Encoding: zstd\r\n"), 400,
        "bad_content_encoding", "truncated");
    add("encoding", "zstd announced twice, applied once",
        Post("/v1/compile", frame, "Content-Encoding: zstd\r\nContent-Encoding: zstd\r\n"), 415,
        "unsupported_content_encoding", "\"zstd, zstd\"");
  }
  add("encoding", "two Content-Type fields",
      Post("/v1/compile", testing::kAddModule, std::string(kText) + "Content-Type: image/png\r\n"), 400,
      "bad_request", "2 Content-Type header fields");
  add("encoding", "Content-Type of punctuation", Post("/v1/compile", testing::kAddModule, "Content-Type: ;;;\r\n"),
      415, "unsupported_media_type", "';;;' is not accepted");

  // Query parameters and request headers with bad values.
  add("query", "negative execute timeout", Post(execute + "?timeout=-5s", kAddInputs, kJson), 400, "bad_request",
      "query parameter timeout");
  add("query", "X-Kiln-Timeout: nan", Post(execute, kAddInputs, std::string(kJson) + "X-Kiln-Timeout: nan\r\n"),
      400, "bad_request", "header X-Kiln-Timeout");
  add("query", "hex entries limit", MakeRequest("GET", "/v1/entries?limit=0x5"), 400, "bad_request",
      "query parameter limit");
  add("query", "forged entries cursor", MakeRequest("GET", "/v1/entries?cursor=zz"), 400, "bad_request",
      "not a cursor of this listing");
  add("query", "unknown entries sort", MakeRequest("GET", "/v1/entries?sort=size"), 400, "bad_request",
      "query parameter sort");
  add("query", "NUL query parameter name", MakeRequest("GET", "/v1/entries?%00=1"), 400, "invalid_query",
      "unknown query parameter");
  add("query", "bad percent-escape", MakeRequest("GET", "/v1/entries?limit=5%2"), 400, "bad_request",
      "bad percent-escape");
  add("query", "empty chip", Post("/v1/compile?chip=", testing::kAddModule, kText), 400, "unknown_chip",
      "unknown chip ''");
  add("query", "negative scoped VMEM", Post("/v1/explain?scoped_vmem_bytes=-1", testing::kAddModule, kText), 400,
      "invalid_options", "non-negative integer");
  add("query", "namespace that is a path", MakeRequest("GET", "/v1/stats", {}, "X-Kiln-Namespace: ../../etc\r\n"),
      400, "bad_request", "X-Kiln-Namespace");
  add("query", "parameter on the tuning route", MakeRequest("GET", "/v1/tune/abc?verbose=1"), 400, "invalid_query",
      "takes no query parameters");

  // Bad tensors for execute.
  add("tensors", "an input too many",
      Post(execute,
           Safetensors(json{{"0", F32Tensor({2, 3}, 0, 24)},
                            {"1", F32Tensor({2, 3}, 24, 48)},
                            {"2", F32Tensor({0}, 48, 48)}}
                           .dump(),
                       kFortyEightBytes),
           kSafetensors),
      422, "input_mismatch", "input '2' matches no parameter");
  add("tensors", "wrong dtype", Post(execute, AddInputs(F32Tensor({2, 3}, 0, 24), F32Tensor({2, 3}, 24, 48, "I32"),
                                                        kFortyEightBytes),
                                     kSafetensors),
      422, "input_mismatch", "parameter 1 is f32[2,3], got s32[2,3]");
  add("tensors", "truncated data",
      Post(execute, AddInputs(F32Tensor({2, 3}, 0, 24), F32Tensor({2, 3}, 24, 48), kFortyEightBytes.substr(0, 45)),
           kSafetensors),
      400, "invalid_safetensors", "run past the 45 bytes of data");
  add("tensors", "overlapping offsets",
      Post(execute, AddInputs(F32Tensor({2, 3}, 0, 24), F32Tensor({2, 3}, 12, 36), kFortyEightBytes), kSafetensors),
      400, "invalid_safetensors", "overlaps tensor");
  add("tensors", "offsets past the data",
      Post(execute, AddInputs(F32Tensor({2, 3}, 0, 24), F32Tensor({2, 3}, 24, 4800), kFortyEightBytes), kSafetensors),
      400, "invalid_safetensors", "run past the 48 bytes");
  add("tensors", "bytes between tensors",
      Post(execute, AddInputs(F32Tensor({2, 3}, 0, 24), F32Tensor({2, 3}, 28, 52), std::string(52, '\0')),
           kSafetensors),
      400, "invalid_safetensors", "belong to no tensor");
  add("tensors", "header length of 2^63", Post(execute, Safetensors(std::string(), "").replace(7, 1, "\x80") + "{}",
                                               kSafetensors),
      400, "invalid_safetensors", "exceeds the limit");
  add("tensors", "header length past the body", Post(execute, Safetensors(std::string(100, ' '), "").substr(0, 20),
                                                     kSafetensors),
      400, "invalid_safetensors", "truncated");
  add("tensors", "one tensor named twice",
      Post(execute,
           Safetensors(R"({"0": {"dtype": "F32", "shape": [2,3], "data_offsets": [0,24]},)"
                       R"( "0": {"dtype": "F32", "shape": [2,3], "data_offsets": [24,48]}})",
                       kFortyEightBytes),
           kSafetensors),
      400, "invalid_safetensors", "names \"0\" twice");
  add("tensors", "BOOL byte that is neither 0 nor 1",
      Post(flip, Safetensors(json{{"0", F32Tensor({2}, 0, 2, "BOOL")}}.dump(), std::string("\x01\x02", 2)),
           kSafetensors),
      400, "invalid_safetensors", "byte value 2, not 0 or 1");
  add("tensors", "JSON pred element that is a number",
      Post(flip, R"({"inputs": [{"shape": [2], "dtype": "pred", "data": [1, 0]}]})", kJson), 400, "invalid_inputs",
      "pred elements must be true or false");
  add("tensors", "JSON dtype that does not exist",
      Post(execute, JsonInputs(R"({"shape": [2,3], "dtype": "q99", "data": [1,2,3,4,5,6]})"), kJson),
      400, "invalid_inputs", "dtype 'q99'");
  add("tensors", "empty safetensors body", Post(execute, "", kSafetensors), 400, "invalid_safetensors",
      "need at least 8");

  // Unknown routes, methods and keys.
  add("routes", "TRACE", MakeRequest("TRACE", "/healthz"), 405, "method_not_allowed", "allowed: GET, HEAD");
  add("routes", "PATCH compile", MakeRequest("PATCH", "/v1/compile", "x"), 405, "method_not_allowed",
      "allowed: POST");
  add("routes", "GET execute", MakeRequest("GET", execute), 405, "method_not_allowed", "allowed: POST");
  add("routes", "DELETE pool", MakeRequest("DELETE", "/v1/pool"), 405, "method_not_allowed", "allowed: GET");
  add("routes", "POST metrics", MakeRequest("POST", "/metrics", "x"), 405, "method_not_allowed", "allowed: GET");
  add("routes", "trailing slash", MakeRequest("GET", "/v1/stats/"), 404, "not_found", "no route for GET /v1/stats/");
  add("routes", "dot-dot segment", MakeRequest("GET", "/v1/executables/../stats"), 404, "not_found", "no route");
  add("routes", "encoded slashes in the key", MakeRequest("GET", "/v1/executables/%2F..%2Fstats"), 400,
      "invalid_key", "'/../stats'");
  add("routes", "upper-case key", Post("/v1/executables/" + std::string(32, 'A') + "/execute", "{}", kJson), 400,
      "invalid_key", "lowercase hex");
  add("routes", "33-digit key", MakeRequest("DELETE", "/v1/executables/" + add_key + "0"), 400, "invalid_key",
      "32 lowercase hex digits");
  add("routes", "OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n", 400, "bad_request", "not an absolute path");
  add("routes", "Expect: 200-ok", Post("/v1/compile", "x", std::string(kText) + "Expect: 200-ok\r\n"), 417,
      "expectation_failed", "200-ok");
  add("routes", "query on the tuning submit", Post("/v1/tune?x=1", "{}", kJson), 400, "invalid_query",
      "unknown query parameter 'x'");
  add("routes", "empty compile body", Post("/v1/compile", "", kText), 400, "bad_request", "the body is empty");

  // Slow clients: cut off after --request-timeout 1.
  add("slow", "request line trickled a byte at a time", "GET /v1/stats HTTP/1.1\r\n", 408, "request_timeout",
      "not received within 1000 ms", Delivery::kTrickle);
  add("slow", "headers that never end", "GET /healthz HTTP/1.1\r\nHost: t\r\nX-A: a", 408, "request_timeout",
      "not received within", Delivery::kStall);
  add("slow", "body that stops halfway",
      "POST /v1/compile HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nHloModule", 408, "request_timeout",
      "not received within", Delivery::kStall);
  return cases;
}

// Sends one case on a fresh connection and checks its answers.
void SendAndCheck(uint16_t port, const HostileCase& c) {
  Result<RawHttpClient> client = RawHttpClient::Connect(port, std::chrono::seconds(10));
  ASSERT_TRUE(client) << client.error().message;
  switch (c.delivery) {
    case Delivery::kWhole:
    case Delivery::kStall:
      ASSERT_TRUE(client->Send(c.bytes));
      break;
    case Delivery::kThenHalfClose:
      ASSERT_TRUE(client->Send(c.bytes));
      client->ShutdownWrite();
      break;
    case Delivery::kTrickle:
      // 600 ms of bytes, then silence: the server's 1 s limit runs out.
      for (size_t i = 0; i < 6 && i < c.bytes.size(); ++i) {
        ASSERT_TRUE(client->Send(c.bytes.substr(i, 1)));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      break;
  }
  for (const Expected& expected : c.answers) {
    Result<RawResponse> response = client->ReadResponse();
    ASSERT_TRUE(response) << response.error().message;
    EXPECT_EQ(response->status, expected.status) << response->body.substr(0, 400);
    const json body = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(body.is_object() && body.contains("error")) << response->body.substr(0, 400);
    EXPECT_EQ(body["error"].value("code", ""), expected.code) << response->body.substr(0, 400);
    const std::string message = body["error"].value("message", "");
    EXPECT_FALSE(message.empty());
    EXPECT_NE(message.find(expected.message_part), std::string::npos) << message;
  }
}

class ServerHostileCatalogueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(serve_.ok());
    add_key_ = Compile(testing::kAddModule);
    flip_key_ = Compile(kFlipModule);
    ASSERT_EQ(add_key_.size(), 32u);
    ASSERT_EQ(flip_key_.size(), 32u);
  }

  std::string Compile(std::string_view hlo) {
    RawResponse compiled = serve_.Call("POST", "/v1/compile", hlo, kText);
    EXPECT_EQ(compiled.status, 200) << compiled.body;
    return json::parse(compiled.body, nullptr, false).value("key", "");
  }

  KilnServeProcess serve_{{"--pool", "v5e:1", "--loops", "1", "--request-timeout", "1", "--max-body", "1MiB"}};
  std::string add_key_;
  std::string flip_key_;
};

TEST_F(ServerHostileCatalogueTest, EveryHostileRequestGetsItsStatusAndCodeAndTheServerServesOn) {
  const std::vector<HostileCase> cases = Catalogue(add_key_, flip_key_);
  std::set<std::string> names;
  std::set<std::string> categories;
  for (const HostileCase& c : cases) {
    EXPECT_TRUE(names.insert(c.name).second) << "two cases named " << c.name;
    categories.insert(c.category);
  }
  EXPECT_GE(cases.size(), 45u);
  EXPECT_EQ(categories, (std::set<std::string>{"framing", "length", "chunking", "huge", "nesting", "dimensions",
                                               "bytes", "encoding", "query", "tensors", "routes", "slow"}));

  for (const HostileCase& c : cases) {
    SCOPED_TRACE(c.category + ": " + c.name);
    SendAndCheck(serve_.port(), c);
    RawResponse health = serve_.Call("GET", "/healthz");
    ASSERT_EQ(health.status, 200) << "the server stopped serving after this case";
  }

  // Still correct afterwards: the add module hits and computes.
  RawResponse hit = serve_.Call("POST", "/v1/compile", testing::kAddModule, kText);
  ASSERT_EQ(hit.status, 200) << hit.body;
  EXPECT_EQ(json::parse(hit.body)["cache"], "hit");
  RawResponse ran = serve_.Call("POST", "/v1/executables/" + add_key_ + "/execute", kAddInputs, kJson);
  ASSERT_EQ(ran.status, 200) << ran.body;
  EXPECT_EQ(json::parse(ran.body)["outputs"][0]["data"], json({11, 22, 33, 44, 55, 66}));
  // Nothing hostile was stored, and no connection was left open but this one.
  EXPECT_EQ(json::parse(serve_.Call("GET", "/v1/stats").body)["entries"], 2);
  EXPECT_NE(serve_.Call("GET", "/metrics").body.find("kiln_http_open_connections 1\n"), std::string::npos);
}

TEST_F(ServerHostileCatalogueTest, TheEntriesChipFilterMatchesAsTheChipNamesDo) {
  // "V5E" names the v5e chip (it is not refused as unknown), so it lists
  // the v5e entries rather than none.
  const json upper = json::parse(serve_.Call("GET", "/v1/entries?chip=V5E").body);
  const json lower = json::parse(serve_.Call("GET", "/v1/entries?chip=v5e").body);
  ASSERT_EQ(lower["entries"].size(), 2u) << lower;
  EXPECT_EQ(upper["entries"], lower["entries"]);
}

}  // namespace
}  // namespace kiln::api
