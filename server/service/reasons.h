// The API codes (Error::reason) the engine's services give their failures:
// what a client, and its retry logic, reads. schema/openapi.yaml lists each
// with its status; server/http/error_status.cc maps the ones whose status
// is not their error code's. Codes of the cache store (cache/
// storage_problem.h), the device pool (runtime/pool/device_pool.h), the
// tuning jobs (tune_jobs.h) and the compiler (topology_mismatch,
// invalid_collective, program_too_large) are theirs; the HTTP front door's
// own are in server/api/api_reasons.h.
#pragma once

#include <string_view>

namespace kiln::service {

// Reading a module (module_reader.h).
inline constexpr std::string_view kHloParseError = "hlo_parse_error";    // 400: not HLO text
inline constexpr std::string_view kHloVerifyError = "hlo_verify_error";  // 400: HLO that breaks the IR's rules
inline constexpr std::string_view kFingerprintError = "fingerprint_error";  // a verified module with no key
// 400: a dynamic dimension (StableHLO's `?`) no arg_shapes refined
// (compiler/stablehlo/refusals.h gives it).
inline constexpr std::string_view kDynamicDimension = "dynamic_dimension";

// Compiling (compile_failure.h): 422 for a program that cannot be compiled
// or fit as given, with the compiler's own reason when it has one; 501 for
// what kiln does not support; kiln's own faults are 500 internal.
inline constexpr std::string_view kCompileFailed = "compile_failed";
inline constexpr std::string_view kDoesNotFit = "does_not_fit";
inline constexpr std::string_view kUnsupported = "unsupported";
inline constexpr std::string_view kOverloaded = "overloaded";  // 503: every compile thread busy, queue full
inline constexpr std::string_view kDraining = "draining";      // 503: shutting down

// Options and names.
inline constexpr std::string_view kUnknownChip = "unknown_chip";        // 400
inline constexpr std::string_view kInvalidOptions = "invalid_options";  // 400
inline constexpr std::string_view kInvalidKey = "invalid_key";          // 400: not 32 lowercase hex digits

// Running and timing (run_limits.h for the pool's).
inline constexpr std::string_view kExecutionFailed = "execution_failed";      // 422
inline constexpr std::string_view kTimingUnavailable = "timing_unavailable";  // 422: a data-dependent loop
inline constexpr std::string_view kHostMemoryBusy = "host_memory_busy";        // 503
inline constexpr std::string_view kDeadlineExceeded = "deadline_exceeded";      // 504
inline constexpr std::string_view kClientClosedRequest = "client_closed_request";  // 499

// Tuning.
inline constexpr std::string_view kHloRequired = "hlo_required";  // 400: the store keeps no text to tune
inline constexpr std::string_view kKeyMismatch = "key_mismatch";  // 400: the module sent is not the key's

}  // namespace kiln::service
