// Internal to kiln_http: the framing rules kiln adds on top of strict llhttp.
//
// llhttp, built strict (third_party/llhttp), refuses chunks whose data
// overruns their size, header names with spaces, conflicting Content-Length
// and Transfer-Encoding and repeated Content-Length. What it still lets
// through, and what a proxy in front of kiln might frame differently (request
// smuggling), is refused here: request lines without a version (HTTP/0.9),
// header fields with an empty name, obs-fold continuation lines, a missing
// or repeated Host, a repeated Content-Type, Transfer-Encoding on HTTP/1.0
// and transfer codings other than a lone `chunked`. Pure functions;
// thread-safe.
#pragma once

#include <llhttp.h>

#include <optional>
#include <string_view>

#include "server/http/header_map.h"
#include "server/http/json_response.h"

namespace kiln::http::internal {

// The refusal of a request whose header section `parser` just finished
// (400, or 501 for an unsupported transfer coding), or nullopt.
std::optional<Error> CheckFraming(const llhttp_t& parser, const HeaderMap& headers);

// The 400 for a header value continued on the next line (obs-fold,
// RFC 9112 §5.2). `field` names the header whose value was continued.
Error ObsFoldError(std::string_view field);

// The 400 for a request line without an HTTP version (HTTP/0.9), which
// llhttp would otherwise take as a request whose header section follows.
Error NoVersionError();

// The 400 for a header field whose name is empty (": value").
Error EmptyFieldNameError();

// The 400 for a parse error llhttp reported.
Error MalformedRequestError(llhttp_errno_t error, const char* reason);

}  // namespace kiln::http::internal
