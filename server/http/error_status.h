// The HTTP status of an error, from its codes alone (never its text).
//
// An error's ErrorCode picks the status; the few API codes (Error::reason)
// to which HTTP gives a status of its own pick theirs, whatever the code
// (listed beside the code their errors carry). The one table:
//
//   ErrorCode            status   reasons with a status of their own
//   invalid_argument     400      unsupported_media_type 415, input_mismatch 422
//   out_of_range         400
//   unauthenticated      401
//   permission_denied    403
//   not_found            404
//   already_exists       409
//   failed_precondition  409      expectation_failed 417
//   aborted              409
//   resource_exhausted   413      headers_too_large 431, insufficient_storage 507,
//                                 does_not_fit 422
//   cancelled            499
//   internal, data_loss  500
//   unimplemented        501      method_not_allowed 405, unsupported_content_encoding 415,
//                                 unsupported_output 422
//   unavailable          503
//   deadline_exceeded    504      request_timeout 408
//   any code             -        compile_failed 422, execution_failed 422
//
// The rule for the codes that cover several statuses: resource_exhausted
// is a request beyond a fixed limit, which retrying cannot help (413; a
// shortage that passes is unavailable, 503 with Retry-After); a request
// that is well formed but that the compiler or the program cannot carry
// out is 422 whatever failed inside. These are the statuses
// schema/openapi.yaml documents for each API code. Pure; thread-safe.
#pragma once

#include "base/status.h"

namespace kiln::http {

int HttpStatusOf(const Error& error);

}  // namespace kiln::http
