// The body and query of POST /v1/compile and /v1/explain.
//
// A body with Content-Type application/json is a CompileRequest object
// ({"hlo", "chip", "options", "arg_shapes"}; its fields win over the
// query); any other body is the module (HLO text, StableHLO text or MLIR
// bytecode) with chip, plan, scoped_vmem_bytes, topology and arg_shapes in
// the query.
// Unknown fields, an unknown chip or plan and a scoped VMEM larger than the
// chip's are 400 (invalid_json, unknown_chip, invalid_options).
//
// The request hash identifies the raw body together with the chip, the
// normalized options and the tenant (XXH3-128): the fast path maps it to a
// key so an identical body is not parsed again. Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "compiler/driver/plan_module.h"
#include "compiler/hlo/fingerprint.h"
#include "server/http/request.h"

namespace kiln::api {

struct CompileRequest {
  std::string hlo;  // the module: HLO text, StableHLO text or MLIR bytecode
  driver::CompileOptions options;  // chip, plan, scoped VMEM
  // ?arg_shapes= or the JSON "arg_shapes" ("s64[],f32[8,4]"): the entry's
  // argument shapes, refining a StableHLO module's dynamic dimensions.
  std::vector<hlo::Shape> argument_shapes;
  bool return_executable = false;  // ?return=executable
  hlo::Hash128 request_hash;
  // X-Kiln-Client ("job/host"), for recompile diagnostics; empty when none.
  // Not part of any key.
  std::string client;
};

inline constexpr size_t kMaxClientBytes = 200;

// Takes the body out of `request` (a text body is moved, not copied).
Result<CompileRequest> ParseCompileRequest(http::Request& request, std::string_view tenant);

// The same without taking the body: `hlo` is left empty for a text body
// (a JSON body is parsed and its `hlo` copied). What the fast path needs to
// name the key: options, return mode and the request hash.
Result<CompileRequest> ParseCompileRequestKey(const http::Request& request, std::string_view tenant);

// Whether the body is a JSON CompileRequest (Content-Type application/json).
bool HasJsonBody(const http::Request& request);

}  // namespace kiln::api
