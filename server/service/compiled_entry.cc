#include "server/service/compiled_entry.h"

#include <chrono>

#include "cache/checksum.h"
#include "cache/components.h"
#include "compiler/hlo/structure_hash.h"

namespace kiln::service {

EntryNotes NotesOfCompile(const driver::CompileOutput& compiled, const driver::CompileOptions& options) {
  EntryNotes notes;
  notes.options = nlohmann::json::parse(driver::OptionsJson(options));
  notes.kernels = compiled.kernels;
  notes.parameters = compiled.fingerprint.parameter_shape_text;
  return notes;
}

cache::PutRequest PutOfCompile(const cache::EntryId& id, const driver::CompileOutput& compiled,
                               const driver::CompileOptions& options, std::string_view executable,
                               std::string_view notes_text, std::optional<hlo::Hash128> request_hash) {
  return cache::PutRequest{
      .id = id,
      .options = std::string(notes_text),
      .plan_kind = options.plan,
      .executable = executable,
      .compile_seconds = compiled.compile_ms / 1000,
      .device_seconds = compiled.estimated_us * 1e-6,
      .components = cache::KeyComponentsOf(compiled.fingerprint),
      .request_hash = request_hash,
  };
}

cache::CompileRecord CompileRecordOf(const hlo::Module& module, const cache::EntryId& id, std::string client,
                                     const driver::CompileOptions& options) {
  cache::CompileRecord record{
      .tenant = id.tenant, .module_name = module.name(), .chip = id.chip, .key = id.key, .client = std::move(client)};
  record.structure = hlo::StructureHash(module).Hex();
  record.options = driver::CanonicalOptionsText(options);
  for (const hlo::Instruction* parameter : module.entry()->parameters()) {
    record.parameters.push_back(parameter->shape().ToString());
  }
  return record;
}

StoredCompile StoreCompile(cache::CacheStore& store, const cache::EntryId& id, const driver::CompileOutput& compiled,
                           const driver::CompileOptions& options, std::string_view source_text,
                           std::optional<hlo::Hash128> request_hash, cache::CompileRecord record,
                           cache::BundleEntry* shared_copy) {
  StoredCompile out;
  out.notes = NotesOfCompile(compiled, options);
  out.executable = std::make_shared<const std::string>(compiled.executable.begin(), compiled.executable.end());
  const std::string notes_text = SerializeEntryNotes(out.notes);
  cache::PutRequest put = PutOfCompile(id, compiled, options, *out.executable, notes_text, request_hash);
  put.source_text = source_text;
  const auto start = std::chrono::steady_clock::now();
  out.stored = store.Put(put);
  out.store_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  out.created_ms = store.Now();
  if (out.stored) {
    record.compile_seconds = compiled.compile_ms / 1000;
    Result<int64_t> other_keys = store.compile_log().Record(record);
    out.recompiled = other_keys && *other_keys > 0;
  }
  if (shared_copy != nullptr) *shared_copy = SharedEntryOf(put, out.created_ms);
  return out;
}

cache::BundleEntry SharedEntryOf(const cache::PutRequest& put, int64_t created_ms) {
  cache::BundleEntry entry;
  entry.metadata.id = put.id;
  entry.metadata.options = put.options;
  entry.metadata.plan_kind = put.plan_kind;
  entry.metadata.raw_bytes = put.executable.size();
  entry.metadata.checksum = cache::ExecutableChecksum(put.executable);
  entry.metadata.compile_seconds = put.compile_seconds;
  entry.metadata.device_seconds = put.device_seconds;
  entry.metadata.created_ms = created_ms;
  entry.metadata.tune_seconds = put.tune_seconds;
  entry.components = put.components;
  entry.executable = std::string(put.executable);
  if (put.source_text.size() <= cache::kMaxSourceBytes) entry.source_text = std::string(put.source_text);
  return entry;
}

}  // namespace kiln::service
