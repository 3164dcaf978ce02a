#include "server/service/run_limits.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "base/units.h"
#include "runtime/io/eval_budget.h"
#include "server/service/reasons.h"
#include "server/service/service_errors.h"

namespace kiln::service {
namespace {

using std::chrono::milliseconds;

// A JSON answer holds each element as a JSON number (16 bytes in the
// document) and then as text (up to ~16 characters).
constexpr uint64_t kJsonBytesPerElement = 32;
// How long a client should wait before retrying a run refused for memory.
constexpr int kMemoryRetryAfterSeconds = 5;

uint64_t AddBytes(uint64_t a, uint64_t b) {
  uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<uint64_t>::max() : sum;
}

uint64_t Bytes(int64_t bytes) { return bytes < 0 ? 0 : static_cast<uint64_t>(bytes); }

// Elements of every array in `shape`, saturating.
uint64_t LeafElements(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    uint64_t total = 0;
    for (const hlo::Shape& element : shape.tuple_shapes()) total = AddBytes(total, LeafElements(element));
    return total;
  }
  if (!shape.IsArray()) return 0;
  const int64_t count = shape.ElementCount();
  return count < 0 ? std::numeric_limits<uint64_t>::max() : static_cast<uint64_t>(count);
}

std::string SecondsText(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2f s", seconds);
  return buffer;
}

// "kernel 0 (k): stopped (deadline exceeded) in while loop %w" ->
// "kernel 0 (k) in while loop %w": where a stopped run was.
std::string WhereItStopped(const std::string& error) {
  const size_t stopped = error.find("stopped (");
  if (stopped == std::string::npos) return error;
  const size_t close = error.find(')', stopped);
  std::string before = error.substr(0, stopped);
  while (!before.empty() && (before.back() == ' ' || before.back() == ':')) before.pop_back();
  std::string after = close == std::string::npos ? "" : error.substr(close + 1);
  while (!after.empty() && after.front() == ' ') after.erase(0, 1);
  if (before.empty()) return after;
  return after.empty() ? before : before + " " + after;
}

std::string Timeline(const EndedRun& run) {
  if (run.device.empty()) return "it waited " + SecondsText(run.queued_seconds) + " in the queue and never ran";
  return "it waited " + SecondsText(run.queued_seconds) + " in the queue, then ran " + SecondsText(run.run_seconds) +
         " on " + run.device;
}

}  // namespace

uint64_t ProgramRunHostBytes(const runtime::LoadedProgram& program, std::span<const hlo::Shape> parameters) {
  uint64_t total = program.program().peak_hbm_bytes;
  for (const hlo::Shape& shape : parameters) total = AddBytes(total, Bytes(runtime::io::HostBytes(shape)));
  int64_t largest = 0;
  for (size_t k = 0; k < program.program().kernels.size(); ++k) {
    largest = std::max(largest, runtime::io::LargestInternalValueBytes(program.kernel_module(k)));
  }
  return AddBytes(total, Bytes(largest));
}

uint64_t RunHostBytes(const ReadyProgram& program, bool json_answer) {
  const hlo::Shape& result = program.program->result_shape();
  uint64_t answer = Bytes(runtime::io::HostBytes(result));
  if (json_answer) {
    const uint64_t elements = LeafElements(result);
    answer = elements > std::numeric_limits<uint64_t>::max() / kJsonBytesPerElement
                 ? std::numeric_limits<uint64_t>::max()
                 : elements * kJsonBytesPerElement;
  }
  return AddBytes(program.run_host_bytes, answer);
}

Error EndedRunError(runtime::pool::JobEnd end, const EndedRun& run) {
  using runtime::pool::JobEnd;
  switch (end) {
    case JobEnd::kDeadline: {
      std::string message = "execution of " + run.key + " exceeded its " + DescribeDuration(run.timeout) +
                            " deadline: " + Timeline(run);
      if (!run.device.empty()) message += "; stopped in " + WhereItStopped(run.error.ToString());
      return DeadlineExceededError(std::move(message));
    }
    case JobEnd::kCancelled:
      return CancelledError("the client went away; the run of " + run.key + " was stopped: " + Timeline(run))
          .WithReason(std::string(kClientClosedRequest));
    case JobEnd::kShutdown:
      return UnavailableError("the server is shutting down; the run of " + run.key + " was stopped: " + Timeline(run))
          .WithReason(std::string(kDraining))
          .RetryAfter(1);
    case JobEnd::kMemoryBusy:
      return UnavailableError("not enough free host memory to run " + run.key + ": " + run.error.ToString())
          .WithReason(std::string(kHostMemoryBusy))
          .RetryAfter(kMemoryRetryAfterSeconds);
    case JobEnd::kCompleted:
    case JobEnd::kFailed:
      break;
  }
  // The run's own code, answered 422 whatever failed inside.
  return Error(run.error).WithContext("running " + run.key).WithReason(std::string(kExecutionFailed));
}

Error RefusedRunError(const Error& error, const std::string& key, const std::string& kind,
                      const std::string& pool_spec) {
  namespace pool = runtime::pool;
  if (error.reason() == pool::kPoolSaturated) {
    return UnavailableError("the " + kind + " run queue is full (" + error.message + " on pool " + pool_spec +
                            "); retry later")
        .WithReason(std::string(pool::kPoolSaturated))
        .RetryAfter(1);
  }
  if (error.reason() == pool::kTooLargeToRun) {
    return ResourceExhaustedError("running " + key + " can never fit the server's host memory: " + error.message)
        .WithReason(std::string(pool::kTooLargeToRun));
  }
  if (error.reason() == pool::kDraining) {
    return UnavailableError("the server is shutting down: " + error.message).WithReason(std::string(kDraining)).RetryAfter(1);
  }
  if (error.reason() == pool::kChipNotInPool) {
    // A slice job's error names the topology and the --pool that has it.
    if (error.message.find(" slice of topology ") != std::string::npos) {
      return FailedPreconditionError(error.message).WithReason(std::string(pool::kChipNotInPool));
    }
    return FailedPreconditionError("the executable targets " + kind + "; the pool has " + pool_spec)
        .WithReason(std::string(pool::kChipNotInPool));
  }
  return InternalFailure("submitting the run of " + key, error);
}

}  // namespace kiln::service
