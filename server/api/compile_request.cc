#include "server/api/compile_request.h"

#include <algorithm>

#include <charconv>

#include <nlohmann/json.hpp>

#include "compiler/hlo/parser.h"
#include "runtime/chip/chip_spec.h"
#include "server/api/api_reasons.h"
#include "server/http/header_map.h"
#include "server/service/compile_options.h"
#include "server/service/reasons.h"

namespace kiln::api {
namespace {

using nlohmann::json;

bool IsJsonContentType(const http::Request& request) {
  std::optional<std::string_view> type = request.headers.Get("Content-Type");
  if (!type) return false;
  std::string_view media = type->substr(0, type->find(';'));
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  return EqualsIgnoreCase(media, "application/json");
}

Result<void> SetScopedVmemText(driver::CompileOptions& options, std::string_view text) {
  int64_t value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return InvalidArgumentError("query parameter scoped_vmem_bytes: expected a non-negative integer, got '" +
                                std::string(text) + "'")
        .WithReason(std::string(service::kInvalidOptions));
  }
  options.scoped_vmem_bytes = value;
  return {};
}

Result<void> SetArgumentShapes(CompileRequest& out, std::string_view text) {
  Result<std::vector<hlo::Shape>> shapes = hlo::ParseShapeList(text);
  if (!shapes) {
    return InvalidArgumentError("arg_shapes: " + shapes.error().ToString() + " (expected shapes like \"s64[],f32[8,4]\")")
        .WithReason(std::string(service::kInvalidOptions));
  }
  out.argument_shapes = std::move(*shapes);
  return {};
}

// The argument shapes in one canonical form, for the request hash.
std::string ArgumentShapesText(const std::vector<hlo::Shape>& shapes) {
  std::string text;
  for (const hlo::Shape& shape : shapes) text += (text.empty() ? "" : ",") + shape.ToString();
  return text;
}

Result<void> ParseJsonBody(const std::string& body, CompileRequest& out) {
  json object = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return InvalidArgumentError("the body is not valid JSON").WithReason(std::string(kInvalidJson));
  if (!object.is_object())
    return InvalidArgumentError("expected an object {\"hlo\": ..., \"chip\": ..., \"options\": ...}")
        .WithReason(std::string(kInvalidJson));
  for (const auto& [field, value] : object.items()) {
    if (field == "hlo") {
      if (!value.is_string())
        return InvalidArgumentError("'hlo' must be a string: the module as HLO or StableHLO text").WithReason(std::string(kInvalidJson));
      out.hlo = value.get<std::string>();
    } else if (field == "chip") {
      if (!value.is_string())
        return InvalidArgumentError("'chip' must be a string (" + runtime::ChipNamesText() + ")")
            .WithReason(std::string(service::kUnknownChip));
      if (auto set = service::SetChip(out.options, value.get<std::string>()); !set) return set;
    } else if (field == "options") {
      if (auto set = service::ApplyJsonOptions(out.options, value); !set) return set;
    } else if (field == "arg_shapes") {
      if (!value.is_string()) {
        return InvalidArgumentError("'arg_shapes' must be a string of shapes like \"s64[],f32[8,4]\"")
            .WithReason(std::string(service::kInvalidOptions));
      }
      if (auto set = SetArgumentShapes(out, value.get<std::string>()); !set) return set;
    } else {
      return InvalidArgumentError("unknown field '" + field + "'; expected hlo, chip, options, arg_shapes")
          .WithReason(std::string(kInvalidJson));
    }
  }
  if (!object.contains("hlo"))
    return InvalidArgumentError("missing field 'hlo' (the module as HLO or StableHLO text)").WithReason(std::string(kInvalidJson));
  return {};
}

}  // namespace

Result<CompileRequest> ParseCompileRequestKey(const http::Request& request, std::string_view tenant) {
  CompileRequest out;
  out.options.chip = "v5e";
  if (auto chip = request.Query("chip")) {
    if (auto set = service::SetChip(out.options, *chip); !set) return std::unexpected(set.error());
  }
  if (auto plan = request.Query("plan")) {
    if (auto set = service::SetPlan(out.options, *plan); !set) return std::unexpected(set.error());
  }
  if (auto vmem = request.Query("scoped_vmem_bytes")) {
    if (auto set = SetScopedVmemText(out.options, *vmem); !set) return std::unexpected(set.error());
  }
  if (auto topology = request.Query("topology")) out.options.topology = std::string(*topology);
  if (auto shapes = request.Query("arg_shapes")) {
    if (auto set = SetArgumentShapes(out, *shapes); !set) return std::unexpected(set.error());
  }
  if (auto what = request.Query("return")) {
    if (*what != "summary" && *what != "executable") {
      return InvalidArgumentError("query parameter return: expected summary or executable, got '" + std::string(*what) +
                                  "'")
          .WithReason(std::string(kBadRequest));
    }
    out.return_executable = *what == "executable";
  }
  if (auto client = request.headers.Get("X-Kiln-Client")) {
    const bool printable = std::all_of(client->begin(), client->end(), [](char c) { return c >= 0x20 && c < 0x7f; });
    if (client->size() > kMaxClientBytes || !printable) {
      return InvalidArgumentError("header X-Kiln-Client: expected at most " + std::to_string(kMaxClientBytes) +
                                  " printable ASCII characters (e.g. job/host)")
          .WithReason(std::string(kBadRequest));
    }
    out.client = std::string(*client);
  }
  if (request.body.empty())
    return InvalidArgumentError("the body is empty; send HLO text or a JSON CompileRequest").WithReason(std::string(kBadRequest));
  if (IsJsonContentType(request)) {
    if (auto parsed = ParseJsonBody(request.body, out); !parsed) return std::unexpected(parsed.error());
  }
  if (auto fits = service::CheckScopedVmem(out.options); !fits) return std::unexpected(fits.error());
  if (auto fits = service::CheckTopology(out.options); !fits) return std::unexpected(fits.error());
  out.request_hash =
      service::HashCompileRequestBody(request.body, out.options, tenant, ArgumentShapesText(out.argument_shapes));
  return out;
}

bool HasJsonBody(const http::Request& request) { return IsJsonContentType(request); }

Result<CompileRequest> ParseCompileRequest(http::Request& request, std::string_view tenant) {
  Result<CompileRequest> out = ParseCompileRequestKey(request, tenant);
  if (out && !IsJsonContentType(request)) out->hlo = std::move(request.body);
  return out;
}

}  // namespace kiln::api
