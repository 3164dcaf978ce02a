#include "tools/inspect_recompiles.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "server/service/recompile_report.h"

namespace kiln::tools {
namespace {

using nlohmann::json;

std::string Join(const json& values) {
  std::string out;
  for (const json& value : values) out += (out.empty() ? "" : ", ") + (value.is_string() ? value.get<std::string>() : value.dump());
  return out;
}

void PrintTable(const json& report) {
  const json& modules = report["modules"];
  if (modules.empty()) {
    std::printf("no module was compiled as more than one program\n");
    return;
  }
  std::printf("%-28s %-8s %-5s %5s %8s %10s  %s\n", "module", "tenant", "chip", "keys", "compiles", "compile_s",
              "storm");
  for (const json& m : modules) {
    std::printf("%-28s %-8s %-5s %5zu %8lld %10.2f  %s\n", m["module"].get<std::string>().c_str(),
                m["tenant"].get<std::string>().c_str(), m["chip"].get<std::string>().c_str(), m["keys"].get<size_t>(),
                static_cast<long long>(m["compiles"].get<int64_t>()), m["compile_seconds"].get<double>(),
                m["storm"].get<bool>() ? "yes" : "no");
    for (const json& d : m["changing_dimensions"]) {
      if (d.contains("rank_changes")) {
        std::printf("    parameter %s: its rank changes\n", d["parameter"].dump().c_str());
      } else {
        std::printf("    parameter %s dimension %s: %s\n", d["parameter"].dump().c_str(), d["dimension"].dump().c_str(),
                    Join(d["values"]).c_str());
      }
    }
    for (const json& c : m["changing_constants"]) {
      std::printf("    constant %%%s: %s\n", c["instruction"].get<std::string>().c_str(), Join(c["values"]).c_str());
    }
    if (!m["clients"].empty()) std::printf("    clients: %s\n", Join(m["clients"]).c_str());
    std::printf("    suggestion: %s\n", m["suggestion"].get<std::string>().c_str());
  }
}

}  // namespace

Status PrintRecompiles(cache::CacheStore& store, const RecompilesArgs& args) {
  cache::CompileRecordFilter filter{.tenant = args.tenant, .module_name = args.name, .min_keys = args.min_keys};
  KILN_ASSIGN_OR_RETURN(std::vector<cache::CompileRecord> records, store.compile_log().Records(filter));
  auto read_source = [&store](const cache::EntryId& id) -> std::optional<std::string> {
    Result<std::optional<std::string>> source = store.Source(id);
    return source ? *source : std::nullopt;
  };
  const json report = service::RecompileReport(records, read_source);
  if (args.json) {
    std::printf("%s\n", report.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  } else {
    PrintTable(report);
  }
  return Ok();
}

}  // namespace kiln::tools
