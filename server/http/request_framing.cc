#include "server/http/request_framing.h"

#include <string>

#include "base/str_cat.h"

namespace kiln::http::internal {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// The whole Transfer-Encoding list, every field joined.
std::string TransferCodings(const HeaderMap& headers) {
  std::string codings;
  for (const auto& [name, value] : headers.fields()) {
    if (!EqualsIgnoreCase(name, "Transfer-Encoding")) continue;
    if (!codings.empty()) codings += ", ";
    codings += Trim(value);
  }
  return codings;
}

}  // namespace

std::optional<Error> CheckFraming(const llhttp_t& parser, const HeaderMap& headers) {
  size_t hosts = 0;
  size_t content_types = 0;
  for (const auto& field : headers.fields()) {
    hosts += EqualsIgnoreCase(field.first, "Host");
    content_types += EqualsIgnoreCase(field.first, "Content-Type");
  }
  if (hosts > 1) {
    return InvalidArgumentError(StrCat("the request has ", hosts, " Host header fields; exactly one is allowed"))
        .WithReason("bad_request");
  }
  // One body, one media type: a proxy might honour another of them.
  if (content_types > 1) {
    return InvalidArgumentError(
               StrCat("the request has ", content_types, " Content-Type header fields; at most one is allowed"))
        .WithReason("bad_request");
  }
  const bool http10 = parser.http_major == 1 && parser.http_minor == 0;
  if (hosts == 0 && !http10) {
    return InvalidArgumentError("an HTTP/1.1 request needs a Host header field").WithReason("bad_request");
  }
  if ((parser.flags & F_TRANSFER_ENCODING) == 0) return std::nullopt;
  if (http10) {
    return InvalidArgumentError(
               "Transfer-Encoding is not allowed in an HTTP/1.0 request; send a "
               "Content-Length")
        .WithReason("bad_request");
  }
  std::string codings = TransferCodings(headers);
  if (!EqualsIgnoreCase(codings, "chunked")) {
    return UnimplementedError(StrCat("Transfer-Encoding '", codings,
                                     "' is not supported: send the body chunked or with a Content-Length "
                                     "(compress it with Content-Encoding: zstd)"))
        .WithReason("not_implemented");
  }
  return std::nullopt;
}

Error ObsFoldError(std::string_view field) {
  return InvalidArgumentError(StrCat("header field '", field,
                                     "' is continued on the next line (obs-fold); send each field on one "
                                     "line"))
      .WithReason("bad_request");
}

Error NoVersionError() {
  return InvalidArgumentError(
             "the request line has no HTTP version (HTTP/0.9 is not supported); send 'METHOD /path HTTP/1.1'")
      .WithReason("bad_request");
}

Error EmptyFieldNameError() {
  return InvalidArgumentError("a header field has an empty name").WithReason("bad_request");
}

Error MalformedRequestError(llhttp_errno_t error, const char* reason) {
  return InvalidArgumentError(
             StrCat("malformed HTTP request: ", reason != nullptr ? reason : "", " (", llhttp_errno_name(error), ")"))
      .WithReason("bad_request");
}

}  // namespace kiln::http::internal
