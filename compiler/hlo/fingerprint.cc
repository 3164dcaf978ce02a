#include "compiler/hlo/fingerprint.h"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "compiler/hlo/fingerprinter.h"

namespace kiln::hlo {
namespace {

using fingerprint_internal::Fingerprinter;
using fingerprint_internal::HashWriter;

Hash128 HashString(char tag, std::string_view s) {
  HashWriter w;
  w.Tag(tag);
  w.Bytes(s);
  return w.Finish();
}

}  // namespace

std::string Hash128::Hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[15 - i] = kDigits[(high >> (4 * i)) & 0xf];
    out[31 - i] = kDigits[(low >> (4 * i)) & 0xf];
  }
  return out;
}

Result<Fingerprint> FingerprintModule(const Module& module, const FingerprintOptions& options) {
  const Computation* entry = module.entry();
  if (entry == nullptr) return InvalidArgumentError("module " + module.name() + " has no entry computation");
  Fingerprinter fp;
  Fingerprint out;
  KILN_ASSIGN_OR_RETURN(out.entry_body, fp.ComputationHash(entry));
  // Hashing the entry hashed exactly the computations it reaches; list them
  // in module order, for explanations. Computations the entry never reaches
  // do not change the program and are not hashed.
  for (const auto& comp : module.computations()) {
    if (comp.get() == entry) continue;
    if (const Hash128* h = fp.FindComputationHash(comp.get())) {
      out.called_computations.push_back({comp->name(), *h});
    }
  }
  static const Shape kMissingParameter;
  for (const Instruction* p : entry->parameters()) {
    const Shape& shape = p != nullptr ? p->shape() : kMissingParameter;
    out.parameter_shapes.push_back(fp.ShapeHash(shape));
    out.parameter_shape_text.push_back(shape.ToString(/*print_default_layout=*/false));
  }
  out.module_config = fp.ModuleConfigHash(module);
  return FingerprintWithOptions(std::move(out), options);
}

Fingerprint FingerprintWithOptions(Fingerprint fingerprint, const FingerprintOptions& options) {
  fingerprint.options = HashString('O', options.compile_options);
  fingerprint.target = HashString('T', options.chip);

  HashWriter w;
  w.Tag('K');
  w.U64(fingerprint.format_version);
  w.Hash(fingerprint.entry_body);
  w.Hash(fingerprint.module_config);
  w.Hash(fingerprint.options);
  w.Hash(fingerprint.target);
  fingerprint.key = w.Finish();
  return fingerprint;
}

}  // namespace kiln::hlo
