// GET, HEAD and DELETE /v1/executables/{key}.
//
// GET and HEAD of an entry in memory are answered on the loop thread
// (FastGetExecutable); everything else here runs on the worker pool.
#include <nlohmann/json.hpp>

#include "server/entry_json.h"
#include "server/http/header_map.h"
#include "server/http/json_response.h"
#include "server/kiln_service.h"
#include "server/service_errors.h"

namespace kiln::server {
namespace {

constexpr std::string_view kExecutableType = "application/vnd.kiln.executable";

bool WantsJson(const http::Request& request) {
  std::optional<std::string_view> accept = request.headers.Get("Accept");
  return accept && accept->find("application/json") != std::string_view::npos &&
         accept->find("application/vnd.kiln.executable") == std::string_view::npos;
}

// The answer to GET (with `executable`) or HEAD (without: the transport
// announces GET's length and sends no body).
http::Response ExecutableResponse(const IndexedEntry& entry, bool head, http::Bytes executable) {
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

// The one 404 of these routes. It depends only on the request (the key and
// the caller's namespace), never on whether the key exists elsewhere.
Error NotFound(std::string_view key_text, const std::string& tenant) {
  return NotFoundError("no executable with key " + std::string(key_text) + " for tenant " + tenant);
}

}  // namespace

void KilnService::Index(EntryView view, uint64_t raw_bytes) {
  index_.Remember(MakeIndexedEntry(std::move(view), raw_bytes));
}

std::optional<http::Response> KilnService::FastGetExecutable(const http::Request& request, const std::string& tenant) {
  std::optional<hlo::Hash128> key = ParseKeyHex(request.PathParam("key").value_or(""));
  if (!key) return std::nullopt;  // the handler explains the 400
  const bool head = request.method == "HEAD";
  if (!head && WantsJson(request)) return std::nullopt;  // the JSON view reads the stored row
  std::shared_ptr<const IndexedEntry> entry = index_.Find(tenant, *key);
  if (entry == nullptr) return std::nullopt;
  // HEAD is metadata only, not a hit, but still asks the hot set: an entry
  // evicted meanwhile is no longer there, while the index may not know.
  cache::CacheStore::HotHit hot = store_->TryGetHot(entry->view.id, /*count_hit=*/!head);
  if (hot.entry == nullptr) return std::nullopt;
  if (hot.hit_stats_due) ScheduleHitStatsFlush();
  if (head) return ExecutableResponse(*entry, /*head=*/true, nullptr);
  return ExecutableResponse(*entry, /*head=*/false, http::Bytes(hot.entry, &hot.entry->executable));
}

Result<cache::EntryId> KilnService::FindEntry(const std::string& tenant, std::string_view key_text, bool use_index) {
  std::optional<hlo::Hash128> key = ParseKeyHex(key_text);
  if (!key) {
    return InvalidArgumentError("key '" + std::string(key_text.substr(0, 64)) + "': expected 32 lowercase hex digits")
        .WithReason("invalid_key");
  }
  if (use_index) {
    if (std::shared_ptr<const IndexedEntry> entry = index_.Find(tenant, *key)) return entry->view.id;
  }
  cache::ListFilter filter{.tenant = tenant, .key_prefix = std::string(key_text), .limit = 8};
  Result<std::vector<cache::EntryMetadata>> entries = store_->List(filter);
  if (!entries) return std::unexpected(InternalFailure("cache listing", entries.error()));
  for (const cache::EntryMetadata& metadata : *entries) {
    if (!metadata.quarantined && metadata.id.format_version == kCompilerFormatVersion &&
        metadata.id.key == *key) {
      Index(ViewOfMetadata(metadata), metadata.raw_bytes);
      return metadata.id;
    }
  }
  return std::unexpected(NotFound(key_text, tenant));
}

void KilnService::GetExecutable(Call call) {
  const bool head = call.request.method == "HEAD";
  const std::string key_text(call.request.PathParam("key").value_or(""));
  // The index may point at an entry evicted since: then once more from the store.
  for (bool use_index : {true, false}) {
    Result<cache::EntryId> id = FindEntry(call.tenant, key_text, use_index);
    if (!id) {
      http::Response response = http::ErrorResponse(id.error());
      if (head) response.body = nullptr;
      return call.respond(std::move(response));
    }
    if (head || WantsJson(call.request)) {
      // Metadata only: not a hit.
      Result<std::optional<cache::EntryMetadata>> metadata = store_->GetMetadata(*id);
      if (!metadata) return call.respond(http::ErrorResponse(InternalFailure("cache lookup", metadata.error())));
      if (!*metadata) {
        index_.Forget(*id);
        continue;
      }
      if (!head) {
        http::Response response = http::JsonResponse(200, EntryToJson(**metadata));
        response.headers.Set("ETag", "\"" + id->key.Hex() + "\"");
        response.headers.Set("X-Kiln-Chip", id->chip);
        response.headers.Set("X-Kiln-Plan", EntryPlanName(**metadata));
        return call.respond(std::move(response));
      }
      return call.respond(ExecutableResponse(*MakeIndexedEntry(ViewOfMetadata(**metadata), (*metadata)->raw_bytes),
                                             /*head=*/true, nullptr));
    }
    Result<std::optional<cache::CacheHit>> hit = store_->Get(*id);
    if (!hit) return call.respond(http::ErrorResponse(InternalFailure("cache lookup", hit.error())));
    if (!*hit) {
      // Failed its checksum just now (quarantined) or evicted meanwhile.
      index_.Forget(*id);
      continue;
    }
    const auto& stored = (*hit)->entry;
    EntryView view = ViewOfMetadata(stored->metadata);
    view.executable = http::Bytes(stored, &stored->executable);
    Index(view, stored->executable.size());
    http::Response response =
        ExecutableResponse(*MakeIndexedEntry(view, stored->executable.size()), /*head=*/false, view.executable);
    return call.respond(std::move(response));
  }
  call.respond(http::ErrorResponse(NotFound(key_text, call.tenant)));
}

void KilnService::DeleteExecutable(Call call) {
  Result<cache::EntryId> id = FindEntry(call.tenant, call.request.PathParam("key").value_or(""));
  if (!id) return call.respond(http::ErrorResponse(id.error()));
  index_.Forget(*id);
  Result<bool> evicted = store_->Evict(*id);
  if (!evicted) return call.respond(http::ErrorResponse(StorageFailure("delete", evicted.error())));
  programs_.Erase(*id);
  if (!*evicted) return call.respond(http::ErrorResponse(NotFound(id->key.Hex(), call.tenant)));
  http::Response response;
  response.status = 204;
  call.respond(std::move(response));
}

}  // namespace kiln::server
