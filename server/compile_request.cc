#include "server/compile_request.h"

#include <algorithm>

#include <charconv>

#include <nlohmann/json.hpp>
#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include "compiler/driver/compile_module.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/chip/topology.h"
#include "server/http/header_map.h"

namespace kiln::server {
namespace {

using nlohmann::json;

constexpr std::string_view kChips = "v4, v5e, v5p, v6e, tpu7x";

bool IsJsonContentType(const http::Request& request) {
  std::optional<std::string_view> type = request.headers.Get("Content-Type");
  if (!type) return false;
  std::string_view media = type->substr(0, type->find(';'));
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  return EqualsIgnoreCase(media, "application/json");
}

Result<void> SetPlan(driver::CompileOptions& options, std::string_view plan) {
  Result<fusion::PlanKind> kind = driver::ParsePlanKind(plan);
  if (!kind) {
    return InvalidArgumentError("options: plan '" + std::string(plan) + "' is not one of none, heuristic, given")
        .WithReason("invalid_options");
  }
  options.plan = *kind;
  return {};
}

Result<void> SetScopedVmemText(driver::CompileOptions& options, std::string_view text) {
  int64_t value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return InvalidArgumentError("query parameter scoped_vmem_bytes: expected a non-negative integer, got '" +
                                std::string(text) + "'")
        .WithReason("invalid_options");
  }
  options.scoped_vmem_bytes = value;
  return {};
}

Result<void> ParseJsonBody(const std::string& body, CompileRequest& out) {
  json object = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return InvalidArgumentError("the body is not valid JSON").WithReason("invalid_json");
  if (!object.is_object())
    return InvalidArgumentError("expected an object {\"hlo\": ..., \"chip\": ..., \"options\": ...}")
        .WithReason("invalid_json");
  for (const auto& [field, value] : object.items()) {
    if (field == "hlo") {
      if (!value.is_string())
        return InvalidArgumentError("'hlo' must be a string of HLO text").WithReason("invalid_json");
      out.hlo = value.get<std::string>();
    } else if (field == "chip") {
      if (!value.is_string())
        return InvalidArgumentError("'chip' must be a string (" + std::string(kChips) + ")").WithReason("unknown_chip");
      if (auto set = SetChip(out.options, value.get<std::string>()); !set) return set;
    } else if (field == "options") {
      if (auto set = ApplyJsonOptions(out.options, value); !set) return set;
    } else {
      return InvalidArgumentError("unknown field '" + field + "'; expected hlo, chip, options")
          .WithReason("invalid_json");
    }
  }
  if (!object.contains("hlo"))
    return InvalidArgumentError("missing field 'hlo' (the HLO text)").WithReason("invalid_json");
  return {};
}

}  // namespace

hlo::Hash128 HashCompileRequestBody(std::string_view body, const driver::CompileOptions& options, std::string_view tenant) {
  XXH3_state_t state;
  XXH3_128bits_reset(&state);
  auto add = [&state](std::string_view part) {
    const uint64_t size = part.size();
    XXH3_128bits_update(&state, &size, sizeof(size));
    XXH3_128bits_update(&state, part.data(), part.size());
  };
  add(body);
  add(options.chip);
  add(driver::CanonicalOptionsText(options));
  add(tenant);
  XXH128_hash_t hash = XXH3_128bits_digest(&state);
  return hlo::Hash128{hash.high64, hash.low64};
}

Result<void> SetChip(driver::CompileOptions& options, std::string_view chip) {
  const runtime::ChipSpec* spec = runtime::FindChip(chip);
  if (spec == nullptr) {
    return InvalidArgumentError("unknown chip '" + std::string(chip) + "' (known: " + std::string(kChips) + ")")
        .WithReason("unknown_chip");
  }
  options.chip = std::string(spec->name);
  return {};
}

Result<void> ApplyJsonOptions(driver::CompileOptions& options, const json& object) {
  if (!object.is_object()) return InvalidArgumentError("options must be an object").WithReason("invalid_options");
  for (const auto& [field, value] : object.items()) {
    if (field == "plan") {
      if (!value.is_string())
        return InvalidArgumentError("options: plan must be a string").WithReason("invalid_options");
      if (auto set = SetPlan(options, value.get<std::string>()); !set) return set;
    } else if (field == "topology") {
      if (!value.is_string()) {
        return InvalidArgumentError("options: topology must be a string like \"2x4\"").WithReason("invalid_options");
      }
      options.topology = value.get<std::string>();
    } else if (field == "scoped_vmem_bytes") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0) {
        return InvalidArgumentError("options: scoped_vmem_bytes must be a non-negative integer")
            .WithReason("invalid_options");
      }
      options.scoped_vmem_bytes = value.get<int64_t>();
    } else {
      return InvalidArgumentError("options: unknown field '" + field + "'; expected one of plan, scoped_vmem_bytes, topology")
          .WithReason("invalid_options");
    }
  }
  return {};
}

Result<void> CheckTopology(driver::CompileOptions& options) {
  if (options.topology.empty() || runtime::FindChip(options.chip) == nullptr) return {};
  Result<std::string> topology = driver::CanonicalTopology(options.topology, options.chip);
  if (!topology) return InvalidArgumentError("options: " + topology.error().message).WithReason("invalid_options");
  options.topology = std::move(*topology);
  return {};
}

Result<void> CheckScopedVmem(const driver::CompileOptions& options) {
  const runtime::ChipSpec* chip = runtime::FindChip(options.chip);
  if (chip != nullptr && options.scoped_vmem_bytes > chip->vmem_bytes) {
    return InvalidArgumentError("options: scoped_vmem_bytes " + std::to_string(options.scoped_vmem_bytes) +
                                " is larger than " + options.chip + "'s VMEM (" + std::to_string(chip->vmem_bytes) +
                                " bytes)")
        .WithReason("invalid_options");
  }
  return {};
}

std::string OptionsJsonText(const driver::CompileOptions& options) { return driver::OptionsJson(options); }

Result<CompileRequest> ParseCompileRequestKey(const http::Request& request, std::string_view tenant) {
  CompileRequest out;
  out.options.chip = "v5e";
  if (auto chip = request.Query("chip")) {
    if (auto set = SetChip(out.options, *chip); !set) return std::unexpected(set.error());
  }
  if (auto plan = request.Query("plan")) {
    if (auto set = SetPlan(out.options, *plan); !set) return std::unexpected(set.error());
  }
  if (auto vmem = request.Query("scoped_vmem_bytes")) {
    if (auto set = SetScopedVmemText(out.options, *vmem); !set) return std::unexpected(set.error());
  }
  if (auto topology = request.Query("topology")) out.options.topology = std::string(*topology);
  if (auto what = request.Query("return")) {
    if (*what != "summary" && *what != "executable") {
      return InvalidArgumentError("query parameter return: expected summary or executable, got '" + std::string(*what) +
                                  "'")
          .WithReason("bad_request");
    }
    out.return_executable = *what == "executable";
  }
  if (auto client = request.headers.Get("X-Kiln-Client")) {
    const bool printable = std::all_of(client->begin(), client->end(), [](char c) { return c >= 0x20 && c < 0x7f; });
    if (client->size() > kMaxClientBytes || !printable) {
      return InvalidArgumentError("header X-Kiln-Client: expected at most " + std::to_string(kMaxClientBytes) +
                                  " printable ASCII characters (e.g. job/host)")
          .WithReason("bad_request");
    }
    out.client = std::string(*client);
  }
  if (request.body.empty())
    return InvalidArgumentError("the body is empty; send HLO text or a JSON CompileRequest").WithReason("bad_request");
  if (IsJsonContentType(request)) {
    if (auto parsed = ParseJsonBody(request.body, out); !parsed) return std::unexpected(parsed.error());
  }
  if (auto fits = CheckScopedVmem(out.options); !fits) return std::unexpected(fits.error());
  if (auto fits = CheckTopology(out.options); !fits) return std::unexpected(fits.error());
  out.request_hash = HashCompileRequestBody(request.body, out.options, tenant);
  return out;
}

bool HasJsonBody(const http::Request& request) { return IsJsonContentType(request); }

Result<CompileRequest> ParseCompileRequest(http::Request& request, std::string_view tenant) {
  Result<CompileRequest> out = ParseCompileRequestKey(request, tenant);
  if (out && !IsJsonContentType(request)) out->hlo = std::move(request.body);
  return out;
}

}  // namespace kiln::server
