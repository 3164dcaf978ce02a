#include "server/service/recompile_report.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/hlo/module_diff.h"
#include "compiler/hlo/parser.h"
#include "server/service/entry_json.h"

namespace kiln::service {
namespace {

using nlohmann::json;

// The dimensions of an array shape's text; nullopt for tuples and text
// that does not parse.
std::optional<std::vector<int64_t>> Dimensions(const std::string& text) {
  auto shape = hlo::ParseShape(text);
  if (!shape || !shape->IsArray()) return std::nullopt;
  return shape->dimensions();
}

// Parameter dimensions whose sizes differ between the programs, in order.
json ChangingDimensions(const std::vector<const cache::CompileRecord*>& programs) {
  json out = json::array();
  size_t parameters = programs.front()->parameters.size();
  for (const cache::CompileRecord* program : programs) parameters = std::min(parameters, program->parameters.size());
  for (size_t p = 0; p < parameters; ++p) {
    std::vector<std::vector<int64_t>> shapes;
    for (const cache::CompileRecord* program : programs) {
      auto dims = Dimensions(program->parameters[p]);
      if (!dims) break;
      shapes.push_back(std::move(*dims));
    }
    if (shapes.size() != programs.size()) continue;
    const size_t rank = shapes.front().size();
    if (std::any_of(shapes.begin(), shapes.end(), [&](const auto& dims) { return dims.size() != rank; })) {
      out.push_back({{"parameter", p}, {"dimension", nullptr}, {"values", json::array()}, {"rank_changes", true}});
      continue;
    }
    for (size_t d = 0; d < rank; ++d) {
      std::set<int64_t> values;
      for (const auto& dims : shapes) values.insert(dims[d]);
      if (values.size() > 1) out.push_back({{"parameter", p}, {"dimension", d}, {"values", values}});
    }
  }
  return out;
}

struct TextChanges {
  json constants = json::array();  // {"instruction", "computation", "values"}
  size_t other_changes = 0;        // instructions that changed otherwise
  size_t compared = 0;             // programs whose texts were compared
};

// Compares the newest programs' texts, each with the one before it.
TextChanges CompareTexts(const std::vector<const cache::CompileRecord*>& programs, const SourceReader& read_source) {
  TextChanges out;
  const size_t first = programs.size() > kComparedPrograms ? programs.size() - kComparedPrograms : 0;
  std::unique_ptr<hlo::Module> previous;
  // instruction -> values in the order seen; computation beside it.
  std::map<std::string, std::pair<std::string, std::vector<std::string>>> constants;
  std::vector<std::string> order;
  for (size_t i = first; i < programs.size(); ++i) {
    const cache::CompileRecord& program = *programs[i];
    std::optional<std::string> text =
        read_source(cache::EntryId{program.tenant, program.key, program.chip, kCompilerFormatVersion});
    std::unique_ptr<hlo::Module> module;
    if (text) {
      if (auto parsed = hlo::ParseModule(*text, "<cached>")) module = std::move(*parsed);
    }
    if (module == nullptr) {
      previous.reset();
      continue;
    }
    ++out.compared;
    if (previous != nullptr) {
      const hlo::ModuleDiff diff = hlo::DiffModules(*previous, *module, /*max_changes=*/64);
      out.other_changes += diff.total_changes;
      for (const hlo::InstructionChange& change : diff.changes) {
        if (!change.value_only) continue;
        --out.other_changes;
        auto [it, added] = constants.try_emplace(change.instruction, change.computation, std::vector<std::string>{});
        if (added) order.push_back(change.instruction);
        auto& values = it->second.second;
        for (const std::string& value : {hlo::ConstantValueText(change.cached), hlo::ConstantValueText(change.current)}) {
          if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
        }
      }
    }
    previous = std::move(module);
  }
  for (const std::string& name : order) {
    const auto& [computation, values] = constants[name];
    out.constants.push_back({{"instruction", name}, {"computation", computation}, {"values", values}});
  }
  return out;
}

// Sizes to pad a changing dimension to: the powers of two covering `values`.
std::vector<int64_t> Buckets(const json& values) {
  std::set<int64_t> buckets;
  for (const json& value : values) {
    int64_t bucket = 1;
    while (bucket < value.get<int64_t>()) bucket *= 2;
    buckets.insert(bucket);
  }
  return {buckets.begin(), buckets.end()};
}

std::string JoinValues(const json& values) {
  std::string out;
  for (const json& value : values) out += (out.empty() ? "" : ", ") + (value.is_string() ? value.get<std::string>() : value.dump());
  return out;
}

// The compile options that differ between the programs, each with every
// value seen ("topology": ["", "2x2"]).
json ChangingOptions(const std::vector<const cache::CompileRecord*>& programs) {
  std::map<std::string, std::set<std::string>> values;  // option -> values
  std::set<std::string> names;
  std::vector<std::map<std::string, std::string>> parsed;
  for (const cache::CompileRecord* program : programs) {
    std::map<std::string, std::string>& options = parsed.emplace_back();
    // driver::CanonicalOptionsText: "plan=heuristic;topology=2x2".
    for (size_t start = 0; start < program->options.size();) {
      size_t end = program->options.find(';', start);
      if (end == std::string::npos) end = program->options.size();
      const std::string pair = program->options.substr(start, end - start);
      const size_t equals = pair.find('=');
      if (equals != std::string::npos) {
        options[pair.substr(0, equals)] = pair.substr(equals + 1);
        names.insert(pair.substr(0, equals));
      }
      start = end + 1;
    }
  }
  json out = json::object();
  for (const std::string& name : names) {
    std::set<std::string> seen;
    for (const auto& options : parsed) seen.insert(options.contains(name) ? options.at(name) : "");
    if (seen.size() > 1) out[name] = std::vector<std::string>(seen.begin(), seen.end());
  }
  return out;
}

std::string Suggestion(const json& dimensions, const TextChanges& texts, const json& options, size_t keys) {
  for (const json& dimension : dimensions) {
    if (dimension.contains("rank_changes")) continue;
    std::string buckets;
    for (int64_t b : Buckets(dimension["values"])) buckets += (buckets.empty() ? "" : ", ") + std::to_string(b);
    return "parameter " + dimension["parameter"].dump() + " dimension " + dimension["dimension"].dump() + " took " +
           std::to_string(dimension["values"].size()) + " sizes (" + JoinValues(dimension["values"]) +
           "): pad it to a few fixed sizes (e.g. " + buckets + ") so one program serves several";
  }
  if (!texts.constants.empty()) {
    const json& constant = texts.constants.front();
    return "constant %" + constant["instruction"].get<std::string>() + " took " +
           std::to_string(constant["values"].size()) + " values (" + JoinValues(constant["values"]) +
           "): pass it as an input instead of baking it into the program";
  }
  if (!options.empty()) {
    std::string what;
    for (const auto& [name, values] : options.items()) {
      std::string seen;
      for (const json& value : values) seen += (seen.empty() ? "" : ", ") + (value.get<std::string>().empty() ? "none" : value.get<std::string>());
      what += (what.empty() ? "" : "; ") + name + " " + seen;
    }
    return "the same program compiled with other options (" + what + "): one entry per option set, as expected";
  }
  if (texts.compared < 2) {
    return std::to_string(keys) + " programs; their texts were not kept, so what changed is unknown";
  }
  return "the programs differ in attributes that follow their shapes: compare two with kiln inspect explain";
}

std::string Iso(int64_t ms) { return Rfc3339(ms); }

}  // namespace

json RecompileReport(const std::vector<cache::CompileRecord>& records, const SourceReader& read_source) {
  json modules = json::array();
  int storms = 0;
  for (size_t begin = 0; begin < records.size();) {
    size_t end = begin;
    // One program: a name, a chip and one structure (the store orders rows
    // so); rows from before structures were kept ('') group by name.
    auto same_group = [&](const cache::CompileRecord& r) {
      return r.tenant == records[begin].tenant && r.module_name == records[begin].module_name &&
             r.chip == records[begin].chip && r.structure == records[begin].structure;
    };
    while (end < records.size() && same_group(records[end])) ++end;
    std::vector<const cache::CompileRecord*> programs;
    for (size_t i = begin; i < end; ++i) programs.push_back(&records[i]);
    begin = end;
    if (programs.size() < 2) continue;

    int64_t compiles = 0;
    double seconds = 0;
    std::set<std::string> clients;
    json listed = json::array();
    for (const cache::CompileRecord* program : programs) {
      compiles += program->compiles;
      seconds += program->compile_seconds;
      if (!program->client.empty()) clients.insert(program->client);
      listed.push_back({{"key", program->key.Hex()},
                        {"client", program->client.empty() ? json(nullptr) : json(program->client)},
                        {"parameters", program->parameters},
                        {"compiles", program->compiles},
                        {"compile_seconds", program->compile_seconds},
                        {"first", Iso(program->first_ms)},
                        {"last", Iso(program->last_ms)}});
    }
    const json dimensions = ChangingDimensions(programs);
    const TextChanges texts = CompareTexts(programs, read_source);
    const json options = ChangingOptions(programs);
    // A storm: one program recompiled as its shapes or constants change,
    // not the same program for several option sets.
    const bool storm = programs.size() >= static_cast<size_t>(kStormKeys) &&
                       (!dimensions.empty() || !texts.constants.empty() || options.empty());
    storms += storm ? 1 : 0;
    modules.push_back({{"tenant", programs.front()->tenant},
                       {"module", programs.front()->module_name},
                       {"chip", programs.front()->chip},
                       {"keys", programs.size()},
                       {"compiles", compiles},
                       {"compile_seconds", seconds},
                       {"storm", storm},
                       {"clients", clients},
                       {"programs", std::move(listed)},
                       {"changing_dimensions", dimensions},
                       {"changing_constants", texts.constants},
                       {"changing_options", options},
                       {"other_changes", texts.other_changes},
                       {"structure", programs.front()->structure.empty() ? json(nullptr)
                                                                         : json(programs.front()->structure)},
                       {"suggestion", Suggestion(dimensions, texts, options, programs.size())}});
  }
  // The costliest first: most programs, then most compile seconds.
  std::stable_sort(modules.begin(), modules.end(), [](const json& a, const json& b) {
    if (a["keys"] != b["keys"]) return a["keys"].get<size_t>() > b["keys"].get<size_t>();
    return a["compile_seconds"].get<double>() > b["compile_seconds"].get<double>();
  });
  return {{"modules", std::move(modules)}, {"storms", storms}};
}

}  // namespace kiln::service
