#include "tools/inspect_explain.h"

#include <climits>
#include <cstdio>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/service/miss_explainer.h"
#include "tools/load_module.h"

namespace kiln::tools {
namespace {

using nlohmann::json;

// A component's side as text; components without a readable form (an
// entry body) show as differing.
std::string Text(const json& value) {
  if (value.is_null()) return "(differs)";
  return value.is_string() ? value.get<std::string>() : value.dump();
}

void PrintReport(const json& answer) {
  std::printf("%s\n", answer["message"].get<std::string>().c_str());
  std::printf("  key      %s\n", answer["key"].get<std::string>().c_str());
  std::printf("  tenant   %s\n", answer["tenant"].get<std::string>().c_str());
  if (answer["cached"].get<bool>() || answer["nearest"].is_null()) return;
  const json& nearest = answer["nearest"];
  std::printf("  nearest  %s (%s, plan %s, created %s; %d of %d components shared)\n",
              nearest["key"].get<std::string>().c_str(), nearest["chip"].get<std::string>().c_str(),
              nearest["plan"].get<std::string>().c_str(), nearest["created"].get<std::string>().c_str(),
              nearest["matching_components"].get<int>(), nearest["total_components"].get<int>());
  if (!answer["differences"].empty()) std::printf("\ndiffering key components:\n");
  for (const json& difference : answer["differences"]) {
    std::printf("  %-22s here %-24s cached %s\n", difference["component"].get<std::string>().c_str(),
                Text(difference["request"]).c_str(), Text(difference["nearest"]).c_str());
  }
  if (!answer["changes"].empty()) {
    std::printf("\ninstructions that differ (%d in all):\n", answer["changes_total"].get<int>());
  } else if (answer.contains("cached_text_kept") && !answer["cached_text_kept"].get<bool>()) {
    std::printf("\nthe nearest entry did not keep its HLO text, so the instructions that differ are unknown\n");
  }
  for (const json& change : answer["changes"]) {
    const std::string kind = change["kind"].get<std::string>();
    std::string where = change["line"].is_null() ? "" : "line " + std::to_string(change["line"].get<int>()) + ": ";
    std::printf("  %s%s %%%s in %%%s\n", where.c_str(), kind.c_str(), change["instruction"].get<std::string>().c_str(),
                change["computation"].get<std::string>().c_str());
    if (!change["request"].is_null()) std::printf("      here:   %s\n", change["request"].get<std::string>().c_str());
    if (!change["cached"].is_null()) std::printf("      cached: %s\n", change["cached"].get<std::string>().c_str());
  }
}

}  // namespace

Status ExplainFile(cache::CacheStore& store, const ExplainArgs& args) {
  KILN_ASSIGN_OR_RETURN(auto module, LoadVerifiedModule(args.file));
  driver::CompileOptions options;
  options.chip = args.chip;
  KILN_ASSIGN_OR_RETURN(options.plan, driver::ParsePlanKind(args.plan));
  json answer;
  if (!args.tenant.empty()) {
    KILN_ASSIGN_OR_RETURN(answer, service::ExplainModule(store, args.tenant, *module, options));
    answer["tenant"] = args.tenant;
  } else {
    // Every tenant's entries: the one that holds the module, else the one
    // whose nearest entry shares the most of it.
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<const cache::StoreTotals> totals, store.Totals());
    std::vector<std::string> tenants;
    for (const auto& [tenant, figures] : totals->by_tenant) tenants.push_back(tenant);
    if (tenants.empty()) tenants.push_back("default");
    int best = -1;
    for (const std::string& tenant : tenants) {
      KILN_ASSIGN_OR_RETURN(json one, service::ExplainModule(store, tenant, *module, options));
      const int shared = one["cached"].get<bool>()       ? INT32_MAX
                         : one["nearest"].is_null()     ? 0
                                                        : one["nearest"]["matching_components"].get<int>();
      if (shared > best) {
        best = shared;
        answer = std::move(one);
        answer["tenant"] = tenant;
      }
    }
  }
  if (args.json) {
    std::printf("%s\n", answer.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  } else {
    PrintReport(answer);
  }
  return Ok();
}

}  // namespace kiln::tools
