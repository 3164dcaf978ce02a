// GET, HEAD and DELETE /v1/executables/{key}.
//
// GET and HEAD of an entry in memory are answered on the loop thread
// (FastGetExecutable); everything else here runs on the worker pool.
#include <nlohmann/json.hpp>

#include "server/api/kiln_api.h"
#include "server/http/header_map.h"
#include "server/http/json_response.h"
#include "server/service/entry_json.h"
#include "server/service/service_errors.h"

namespace kiln::api {
namespace {

constexpr std::string_view kExecutableType = "application/vnd.kiln.executable";

bool WantsJson(const http::Request& request) {
  std::optional<std::string_view> accept = request.headers.Get("Accept");
  return accept && accept->find("application/json") != std::string_view::npos &&
         accept->find("application/vnd.kiln.executable") == std::string_view::npos;
}

// The answer to GET (with `executable`) or HEAD (without: the transport
// announces GET's length and sends no body).
http::Response ExecutableResponse(const service::IndexedEntry& entry, bool head, http::Bytes executable) {
  http::Response response;
  response.status = 200;
  response.content_type = kExecutableType;
  if (head) {
    response.head_content_length = entry.raw_bytes;
    response.compressible = false;
  } else {
    response.body = std::move(executable);
  }
  response.headers.Set("ETag", entry.etag);
  response.headers.Set("X-Kiln-Chip", entry.view.id.chip);
  response.headers.Set("X-Kiln-Plan", entry.view.plan);
  return response;
}

}  // namespace

std::optional<http::Response> KilnApi::FastGetExecutable(const http::Request& request, const std::string& tenant) {
  std::optional<hlo::Hash128> key = service::ParseKeyHex(request.PathParam("key").value_or(""));
  if (!key) return std::nullopt;  // the handler explains the 400
  const bool head = request.method == "HEAD";
  if (!head && WantsJson(request)) return std::nullopt;  // the JSON view reads the stored row
  // HEAD is metadata only, not a hit, but still asks the hot set: an entry
  // evicted meanwhile is no longer there, while the index may not know.
  std::optional<service::StoredEntries::Hot> hot = engine_->entries().FindHot(tenant, *key, /*count_hit=*/!head);
  if (!hot) return std::nullopt;
  if (head) return ExecutableResponse(*hot->entry, /*head=*/true, nullptr);
  return ExecutableResponse(*hot->entry, /*head=*/false, std::move(hot->executable));
}

void KilnApi::GetExecutable(Call call) {
  const bool head = call.request.method == "HEAD";
  const std::string key_text(call.request.PathParam("key").value_or(""));
  // The index may point at an entry evicted since: then once more from the store.
  for (bool use_index : {true, false}) {
    Result<cache::EntryId> id = engine_->entries().Find(call.tenant, key_text, use_index);
    if (!id) {
      http::Response response = http::ErrorResponse(id.error());
      if (head) response.body = nullptr;
      return call.respond(std::move(response));
    }
    if (head || WantsJson(call.request)) {
      // Metadata only: not a hit.
      Result<std::optional<cache::EntryMetadata>> metadata = engine_->store().GetMetadata(*id);
      if (!metadata) return call.respond(http::ErrorResponse(service::InternalFailure("cache lookup", metadata.error())));
      if (!*metadata) {
        engine_->entries().Forget(*id);
        continue;
      }
      if (!head) {
        http::Response response = http::JsonResponse(200, service::EntryToJson(**metadata));
        response.headers.Set("ETag", "\"" + id->key.Hex() + "\"");
        response.headers.Set("X-Kiln-Chip", id->chip);
        response.headers.Set("X-Kiln-Plan", service::EntryPlanName(**metadata));
        return call.respond(std::move(response));
      }
      return call.respond(ExecutableResponse(*service::MakeIndexedEntry(service::ViewOfMetadata(**metadata), (*metadata)->raw_bytes),
                                             /*head=*/true, nullptr));
    }
    Result<std::optional<cache::CacheHit>> hit = engine_->store().Get(*id);
    if (!hit) return call.respond(http::ErrorResponse(service::InternalFailure("cache lookup", hit.error())));
    if (!*hit) {
      // Failed its checksum just now (quarantined) or evicted meanwhile.
      engine_->entries().Forget(*id);
      continue;
    }
    const auto& stored = (*hit)->entry;
    service::EntryView view = service::ViewOfMetadata(stored->metadata);
    view.executable = http::Bytes(stored, &stored->executable);
    engine_->entries().Remember(view, stored->executable.size());
    http::Response response = ExecutableResponse(*service::MakeIndexedEntry(view, stored->executable.size()),
                                                 /*head=*/false, view.executable);
    return call.respond(std::move(response));
  }
  call.respond(http::ErrorResponse(service::EntryNotFound(key_text, call.tenant)));
}

void KilnApi::DeleteExecutable(Call call) {
  Result<cache::EntryId> id = engine_->entries().Find(call.tenant, call.request.PathParam("key").value_or(""));
  if (!id) return call.respond(http::ErrorResponse(id.error()));
  engine_->entries().Forget(*id);
  Result<bool> evicted = engine_->store().Evict(*id);
  if (!evicted) return call.respond(http::ErrorResponse(service::StorageFailure("delete", evicted.error())));
  engine_->execute().Forget(*id);
  if (!*evicted) return call.respond(http::ErrorResponse(service::EntryNotFound(id->key.Hex(), call.tenant)));
  http::Response response;
  response.status = 204;
  call.respond(std::move(response));
}

}  // namespace kiln::api
