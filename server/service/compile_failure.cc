#include "server/service/compile_failure.h"

#include <string>

#include "server/service/reasons.h"

namespace kiln::service {

Error CompileFailure(const Error& compiler_error) {
  const std::string message = compiler_error.ToString();
  if (!compiler_error.reason().empty()) return Error::Coded(compiler_error.code, message).WithReason(compiler_error.reason());
  switch (compiler_error.code) {
    case ErrorCode::kResourceExhausted:
      return ResourceExhaustedError(message).WithReason(std::string(kDoesNotFit));
    case ErrorCode::kUnimplemented:
      return UnimplementedError(message).WithReason(std::string(kUnsupported));
    case ErrorCode::kInternal:
    case ErrorCode::kDataLoss:
      return InternalError(message);
    default:
      return InvalidArgumentError(message).WithReason(std::string(kCompileFailed));
  }
}

}  // namespace kiln::service
