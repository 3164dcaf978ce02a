#include "tools/prewarm_store_target.h"

#include "runtime/chip/chip_spec.h"
#include "server/service/compile_options.h"
#include "server/service/compiled_entry.h"
#include "server/service/tenants.h"
#include "server/service/tune_records.h"
#include "server/service/tune_runner.h"
#include "tools/tune_store.h"

namespace kiln::tools {

cache::EntryId StoreTarget::IdOf(const CompileJob& job) const {
  return cache::EntryId{.tenant = std::string(service::kDefaultTenant), .key = job.key, .chip = job.options.chip};
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
  cache::CompileRecord record = service::CompileRecordOf(*module, IdOf(job), "kiln prewarm", job.options);
  KILN_ASSIGN_OR_RETURN(driver::CompileOutput compiled, driver::CompileModule(*module, job.options));
  if (compiled.fingerprint.key != job.key) {
    return InternalError("the compile's key " + compiled.fingerprint.key.Hex() + " differs from the planned " +
                         job.key.Hex());
  }
  // Stored and logged as a server's compile of the same body is, so a
  // server on this store answers it from its fast path and a dump folder's
  // recompiles show in `kiln inspect recompiles`.
  const hlo::Hash128 request_hash =
      service::HashCompileRequestBody(job.source->text, job.options, service::kDefaultTenant);
  service::StoredCompile stored_compile = service::StoreCompile(store_, IdOf(job), compiled, job.options,
                                                                job.source->text, request_hash, std::move(record));
  if (!stored_compile.stored) return stored_compile.stored.error().WithContext("storing the entry");
  outcome.compiled = true;
  outcome.compile_seconds = compiled.compile_ms / 1000;
  outcome.bytes = stored_compile.executable->size();
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
  service::StoreRecords records(store_, std::string(service::kDefaultTenant));
  service::SimulatedRunner runner(*chip);
  // As kiln tune: an output check past a third of the budget means tiles only.
  if (tune_->max_seconds > 0) runner.set_evaluation_limit(tune_->max_seconds / 3);
  Result<autotune::TuneResult> result = autotune::Tune(**module, job.options, runner, &records, *tune_);
  if (!result) return not_tuned(result.error().ToString());
  return StoreTuneResult(store_, *result, job.options, records.added(), job.source->text);
}

}  // namespace kiln::tools
