// libFuzzer harness: a cache bundle as `kiln inspect import` reads it
// (cache/bundle.h DecodeBundle: magic, versions, item framing, checksums,
// the manifest, every field, every executable through the runtime's
// verifier), before anything is written to a store.
//
// Contract checked beyond "no crash": a bundle that decodes re-encodes to
// a bundle that decodes to the same entries and records.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cache/bundle.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto bundle = cache::DecodeBundle(bytes, cache::CurrentSchemaVersion());
  if (!bundle) return 0;
  auto encoded = cache::EncodeBundle(*bundle);
  if (!encoded) fuzz::FailCheck("a decoded bundle does not encode", encoded.error().ToString());
  auto again = cache::DecodeBundle(*encoded, cache::CurrentSchemaVersion());
  if (!again) fuzz::FailCheck("a re-encoded bundle does not decode", again.error().ToString());
  if (again->entries.size() != bundle->entries.size() || again->records.size() != bundle->records.size()) {
    fuzz::FailCheck("a re-encoded bundle changed its counts", "");
  }
  for (size_t i = 0; i < bundle->entries.size(); ++i) {
    if (again->entries[i].executable != bundle->entries[i].executable ||
        !(again->entries[i].metadata.id == bundle->entries[i].metadata.id)) {
      fuzz::FailCheck("a re-encoded bundle changed entry", std::to_string(i));
    }
  }
  return 0;
}
