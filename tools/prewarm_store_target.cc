#include "tools/prewarm_store_target.h"

#include "runtime/chip/chip_spec.h"
#include "server/auth.h"
#include "server/compile_request.h"
#include "server/compiled_entry.h"
#include "server/tune_records.h"
#include "server/tune_runner.h"
#include "tools/tune_store.h"

namespace kiln::tools {

cache::EntryId StoreTarget::IdOf(const CompileJob& job) const {
  return cache::EntryId{.tenant = std::string(server::kDefaultTenant), .key = job.key, .chip = job.options.chip};
}

Result<bool> StoreTarget::Contains(const CompileJob& job) {
  KILN_ASSIGN_OR_RETURN(std::optional<cache::EntryMetadata> stored, store_.GetMetadata(IdOf(job)));
  return stored.has_value() && !stored->quarantined;
}

Result<JobOutcome> StoreTarget::Make(const CompileJob& job) {
  JobOutcome outcome;
  // Another process (a server, a second prewarm) may have stored it since.
  KILN_ASSIGN_OR_RETURN(bool stored, Contains(job));
  if (stored) return outcome;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module, ParseSource(*job.source));
  cache::CompileRecord record = server::CompileRecordOf(*module, IdOf(job), "kiln prewarm", job.options);
  KILN_ASSIGN_OR_RETURN(driver::CompileOutput compiled, driver::CompileModule(*module, job.options));
  if (compiled.fingerprint.key != job.key) {
    return InternalError("the compile's key " + compiled.fingerprint.key.Hex() + " differs from the planned " +
                         job.key.Hex());
  }
  const std::string executable(compiled.executable.begin(), compiled.executable.end());
  const std::string notes = server::SerializeEntryNotes(server::NotesOfCompile(compiled, job.options));
  const hlo::Hash128 request_hash = server::HashCompileRequestBody(job.source->text, job.options, server::kDefaultTenant);
  cache::PutRequest put = server::PutOfCompile(IdOf(job), compiled, job.options, executable, notes, request_hash);
  put.source_text = job.source->text;
  if (Status put_status = store_.Put(put); !put_status) return put_status.error().WithContext("storing the entry");
  // Logged like a server's compile, so a dump folder's recompiles show in
  // `kiln inspect recompiles`; diagnostics only, a failure is ignored.
  record.compile_seconds = compiled.compile_ms / 1000;
  (void)store_.compile_log().Record(record);
  outcome.compiled = true;
  outcome.compile_seconds = compiled.compile_ms / 1000;
  outcome.bytes = executable.size();
  if (Result<std::optional<cache::EntryMetadata>> kept = store_.GetMetadata(IdOf(job)); kept && *kept) {
    outcome.stored_bytes = (*kept)->stored_bytes;
  }
  if (tune_) {
    const StoreOutcome tuned = Tune(job);
    outcome.tuned = tuned.stored;
    outcome.tune_note = tuned.note;
  }
  return outcome;
}

StoreOutcome StoreTarget::Tune(const CompileJob& job) {
  auto not_tuned = [](std::string why) {
    StoreOutcome outcome;
    outcome.note = "not tuned: " + why;
    return outcome;
  };
  const runtime::ChipSpec* chip = runtime::FindChip(job.options.chip);
  if (chip == nullptr) return not_tuned("unknown chip " + job.options.chip);
  Result<std::unique_ptr<hlo::Module>> module = ParseSource(*job.source);
  if (!module) return not_tuned(module.error().ToString());
  server::StoreRecords records(store_, std::string(server::kDefaultTenant));
  server::SimulatedRunner runner(*chip);
  // As kiln tune: an output check past a third of the budget means tiles only.
  if (tune_->max_seconds > 0) runner.set_evaluation_limit(tune_->max_seconds / 3);
  Result<autotune::TuneResult> result = autotune::Tune(**module, job.options, runner, &records, *tune_);
  if (!result) return not_tuned(result.error().ToString());
  return StoreTuneResult(store_, *result, job.options, records.added());
}

}  // namespace kiln::tools
