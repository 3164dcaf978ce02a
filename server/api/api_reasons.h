// The API codes (Error::reason) the HTTP front door gives requests it
// cannot take: a body, header or query it cannot read, or a caller it
// does not know. The engine's own are in server/service/reasons.h;
// schema/openapi.yaml lists each with its status.
#pragma once

#include <string_view>

namespace kiln::api {

inline constexpr std::string_view kBadRequest = "bad_request";                      // 400
inline constexpr std::string_view kInvalidJson = "invalid_json";                    // 400
inline constexpr std::string_view kInvalidJobId = "invalid_job_id";                 // 400
inline constexpr std::string_view kUnsupportedMediaType = "unsupported_media_type";  // 415
inline constexpr std::string_view kUnauthorized = "unauthorized";                    // 401
inline constexpr std::string_view kForbidden = "forbidden";                          // 403
// An execute's inputs and outputs (execute_inputs.h, json_tensors.h).
inline constexpr std::string_view kInvalidInputs = "invalid_inputs";            // 400
inline constexpr std::string_view kInvalidSafetensors = "invalid_safetensors";  // 400
inline constexpr std::string_view kInputMismatch = "input_mismatch";            // 422
inline constexpr std::string_view kUnsupportedOutput = "unsupported_output";    // 422

}  // namespace kiln::api
