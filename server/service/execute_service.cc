#include "server/service/execute_service.h"

#include <optional>

#include "runtime/spmd/global_arguments.h"
#include "runtime/timing/timed_slice_execution.h"
#include "server/service/run_limits.h"
#include "server/service/service_errors.h"

namespace kiln::service {
namespace {

// One run from submission to answer; shared by the pool job's two callbacks.
struct RunState {
  std::shared_ptr<const ReadyProgram> program;
  std::vector<hlo::Literal> inputs;
  std::string key;
  std::string kind;
  int64_t step_budget = 0;
  std::chrono::milliseconds timeout{0};
  std::shared_ptr<runtime::Interrupt> interrupt = std::make_shared<runtime::Interrupt>();
  ExecuteDone done;
  std::optional<runtime::timing::TimedExecution> run;
};

// Runs the program on its chip, or on every chip of its slice (global
// arguments split, the global result assembled).
Result<runtime::timing::TimedExecution> RunOnChips(const ReadyProgram& ready, std::span<const hlo::Literal> inputs,
                                                   const runtime::EvalOptions& eval) {
  if (ready.topology.empty()) return runtime::timing::ExecuteTimed(*ready.program, *ready.timer, inputs, eval);
  const runtime::Program& program = ready.program->program();
  KILN_ASSIGN_OR_RETURN(auto chip_args, runtime::ChipArguments(program, inputs, ready.slice.devices()));
  KILN_ASSIGN_OR_RETURN(runtime::timing::TimedSliceExecution run,
                        runtime::timing::ExecuteTimedOnSlice(*ready.program, *ready.timer, ready.slice, chip_args, eval));
  runtime::timing::TimedExecution out;
  KILN_ASSIGN_OR_RETURN(out.result, runtime::ProgramResult(program, std::move(run.results)));
  out.profile = std::move(run.profile);
  return out;
}

}  // namespace

ExecuteService::ExecuteService(cache::CacheStore& store, runtime::pool::DevicePool& pool, TuneGate& gate,
                               ServiceMetrics& metrics, ExecuteServiceOptions options)
    : store_(store),
      pool_(pool),
      gate_(gate),
      metrics_(metrics),
      options_(options),
      programs_(options.program_cache_entries),
      chips_(pool.status().chips) {}

std::string ExecuteService::DeviceName(int pool_index) const {
  if (pool_index < 0 || pool_index >= static_cast<int>(chips_.size())) return "";
  const runtime::pool::ChipStatus& chip = chips_[pool_index];
  return chip.kind + ":" + std::to_string(chip.kind_index);
}

void ExecuteService::Refused() {
  metrics_.ExecuteRequested();
  metrics_.ExecuteFailed();
}

void ExecuteService::FailedToAnswer() { metrics_.ExecuteFailed(); }

Result<std::shared_ptr<const ReadyProgram>> ExecuteService::Program(const cache::EntryId& id) {
  if (std::shared_ptr<const ReadyProgram> ready = programs_.Find(id)) return ready;
  Result<std::optional<cache::CacheHit>> hit = store_.Get(id);
  if (!hit) return std::unexpected(InternalFailure("cache lookup", hit.error()));
  if (!*hit) return NotFoundError("no executable with key " + id.key.Hex() + " for tenant " + id.tenant);
  const std::string& bytes = (*hit)->entry->executable;
  auto ready = LoadReadyProgram(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  if (!ready) return std::unexpected(InternalFailure("loading executable " + id.key.Hex(), ready.error()));
  // Bytes another process wrote into the store's file are held to what
  // every other reader of an entry checks: the program is the key's.
  const runtime::Program& program = (*ready)->program->program();
  if (program.key != id.key.Hex() || program.chip != id.chip) {
    return DataLossError("entry " + id.ToString() + " holds a program compiled as " + program.key + " for " +
                         program.chip + "; it is not served");
  }
  programs_.Insert(id, *ready);
  return *ready;
}

void ExecuteService::Execute(ExecuteCall call, ExecuteDone done) {
  metrics_.ExecuteRequested();
  const runtime::Program& program = call.program->program->program();
  auto state = std::make_shared<RunState>();
  state->program = call.program;
  state->inputs = std::move(call.inputs);
  state->key = call.id.key.Hex();
  state->kind = program.chip;
  state->step_budget = options_.step_budget;
  state->timeout = call.timeout;
  state->done = std::move(done);

  runtime::pool::Job job;
  job.client = call.id.tenant;
  job.label = state->key;
  job.chip_kind = program.chip;
  job.topology = call.program->topology;
  job.hbm_bytes = program.peak_hbm_bytes;
  job.host_bytes = RunHostBytes(*call.program, call.json_answer);
  job.deadline = call.received + call.timeout;
  job.interrupt = state->interrupt;
  job.cancelled = std::move(call.cancelled);
  job.run = [state](const runtime::pool::ChipContext&) -> Result<double> {
    runtime::EvalOptions eval;
    eval.step_budget = state->step_budget;
    eval.interrupt = state->interrupt.get();
    Result<runtime::timing::TimedExecution> run = RunOnChips(*state->program, state->inputs, eval);
    state->inputs.clear();
    if (!run) return std::unexpected(run.error());
    const double seconds = run->profile ? run->profile->seconds : 0;
    state->run = std::move(*run);
    return seconds;
  };
  job.done = [this, state](Status status, const runtime::pool::JobStats& stats) {
    gate_.RunEnded();
    if (!status) {
      metrics_.ExecuteFailed();
      metrics_.ExecuteEnded(runtime::pool::JobEndName(stats.end));
      EndedRun ended{.key = state->key,
                     .device = stats.chip < 0 ? "" : DeviceName(stats.chip),
                     .timeout = state->timeout,
                     .queued_seconds = stats.queued_seconds,
                     .run_seconds = stats.run_seconds,
                     .error = status.error()};
      return state->done(std::unexpected(EndedRunError(stats.end, ended)));
    }
    ExecuteResult result;
    result.key = state->key;
    result.chip = state->kind;
    result.device = DeviceName(stats.chip);
    result.topology = state->program->program->program().topology;
    for (int d : state->program->topology) result.chips *= d;
    result.run = std::move(*state->run);
    result.queue_ms = stats.queued_seconds * 1000;
    result.wall_ms = stats.run_seconds * 1000;
    metrics_.Executed(state->kind, result.run.profile ? result.run.profile->seconds : 0);
    state->done(std::move(result));
  };

  gate_.RunSubmitted();  // background tuning pauses until the run ends
  if (auto submitted = pool_.Submit(std::move(job)); !submitted) {
    gate_.RunEnded();
    metrics_.ExecuteFailed();
    if (submitted.error().reason() == runtime::pool::kTooLargeToRun) metrics_.ExecuteEnded("too_large");
    state->done(std::unexpected(RefusedRunError(submitted.error(), state->key, state->kind, pool_.spec().ToString())));
  }
}

}  // namespace kiln::service
