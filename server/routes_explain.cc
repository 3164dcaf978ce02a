// POST /v1/explain: is this HLO cached, and if not, how does it differ
// from the nearest entry? Never compiles.
#include <nlohmann/json.hpp>

#include "cache/components.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "compiler/driver/compile_module.h"
#include "server/compile_request.h"
#include "server/entry_json.h"
#include "server/http/json_response.h"
#include "server/kiln_service.h"
#include "server/service_errors.h"

namespace kiln::server {
namespace {

using nlohmann::json;

// The readable side of a component, or null.
json ComponentText(const std::string& name, const std::vector<std::string>& parameters, const std::string& chip,
                   const json& options) {
  constexpr std::string_view kParameter = "parameter ";
  if (name.starts_with(kParameter)) {
    size_t index = std::strtoul(name.c_str() + kParameter.size(), nullptr, 10);
    if (index < parameters.size()) return parameters[index];
    return nullptr;
  }
  if (name == "target") return chip;
  if (name == "options") return options.dump();
  return nullptr;
}

bool HasComponent(const std::vector<cache::KeyComponent>& components, const std::string& name) {
  for (const cache::KeyComponent& component : components) {
    if (component.name == name) return true;
  }
  return false;
}

json Difference(const std::string& name, json request, json nearest) {
  std::string message;
  if (request.is_null() && nearest.is_null()) {
    message = name + " differs";
  } else if (request.is_null()) {
    message = "the request has no " + name + "; the nearest entry's is " + nearest.get<std::string>();
  } else if (nearest.is_null()) {
    message = name + " is " + request.get<std::string>() + "; the nearest entry has none";
  } else {
    message = name + " is " + request.get<std::string>() + ", nearest entry has " + nearest.get<std::string>();
  }
  return json{{"component", name}, {"request", std::move(request)}, {"nearest", std::move(nearest)}, {"message", message}};
}

}  // namespace

void KilnService::Explain(Call call) {
  Result<CompileRequest> parsed = ParseCompileRequest(call.request, call.tenant);
  if (!parsed) return call.respond(http::ErrorResponse(parsed.error()));
  const CompileRequest& request = *parsed;
  Result<std::unique_ptr<hlo::Module>> module = hlo::ParseModule(request.hlo, "<hlo>");
  if (!module) return call.respond(http::ErrorResponse(module.error().WithReason("hlo_parse_error")));
  if (Status verified = hlo::VerifyModule(**module); !verified) {
    return call.respond(http::ErrorResponse(verified.error().WithReason("hlo_verify_error")));
  }
  Result<hlo::Fingerprint> fingerprint =
      hlo::FingerprintModule(**module, driver::FingerprintOptionsFor(request.options));
  if (!fingerprint) return call.respond(http::ErrorResponse(fingerprint.error().WithReason("hlo_verify_error")));

  const std::vector<cache::KeyComponent> components = cache::KeyComponentsOf(*fingerprint);
  const json options = json::parse(driver::OptionsJson(request.options));
  const std::string& chip = request.options.chip;
  json component_list = json::array();
  for (const cache::KeyComponent& component : components) {
    json item = {{"component", component.name}, {"hash", component.hash.Hex()}};
    json text = ComponentText(component.name, fingerprint->parameter_shape_text, chip, options);
    if (!text.is_null()) item["text"] = std::move(text);
    component_list.push_back(std::move(item));
  }
  json answer = {{"key", fingerprint->key.Hex()}, {"components", std::move(component_list)}};

  // Only the request's own namespace: an entry of another one is not "cached".
  const cache::EntryId id{.tenant = call.tenant, .key = fingerprint->key, .chip = chip};
  Result<std::optional<cache::EntryMetadata>> metadata = store_->GetMetadata(id);
  if (!metadata) return call.respond(http::ErrorResponse(InternalFailure("cache lookup", metadata.error())));
  const bool cached = *metadata && !(*metadata)->quarantined;
  answer["cached"] = cached;
  answer["differences"] = json::array();
  answer["nearest"] = nullptr;
  if (cached) {
    answer["message"] = "hit: the key is cached";
    return call.respond(http::JsonResponse(200, answer));
  }
  Result<std::optional<cache::Explanation>> explanation =
      store_->Explain(call.tenant, chip, fingerprint->format_version, components);
  if (!explanation) return call.respond(http::ErrorResponse(InternalFailure("explain", explanation.error())));
  if (!*explanation) {
    answer["message"] = "miss: no cached " + chip + " entry shares any component with this module";
    return call.respond(http::JsonResponse(200, answer));
  }
  const cache::Explanation& nearest = **explanation;
  const EntryNotes notes = ParseEntryNotes(nearest.nearest.options);
  answer["nearest"] = {
      {"key", nearest.nearest.id.key.Hex()},
      {"chip", nearest.nearest.id.chip},
      {"plan", EntryPlanName(nearest.nearest)},
      {"created", Rfc3339(nearest.nearest.created_ms)},
      {"matching_components", nearest.shared_components},
      {"total_components", components.size()},
  };
  for (const std::string& name : nearest.differing) {
    json request_side = HasComponent(components, name)
                            ? ComponentText(name, fingerprint->parameter_shape_text, chip, options)
                            : json(nullptr);
    json nearest_side = HasComponent(nearest.nearest_components, name)
                            ? ComponentText(name, notes.parameters, nearest.nearest.id.chip, notes.options)
                            : json(nullptr);
    answer["differences"].push_back(Difference(name, std::move(request_side), std::move(nearest_side)));
  }
  answer["message"] = answer["differences"].empty()
                          ? json("miss: the nearest entry differs only in its key")
                          : json("miss: " + answer["differences"][0]["message"].get<std::string>());
  call.respond(http::JsonResponse(200, answer));
}

}  // namespace kiln::server
