#include "server/compiled_entry.h"

#include "cache/components.h"
#include "compiler/hlo/structure_hash.h"

namespace kiln::server {

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

}  // namespace kiln::server
