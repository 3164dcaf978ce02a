#include "tools/inspect_where.h"

#include <cstdlib>

#include "cache/shared/shared_tier.h"

namespace kiln::tools {

Result<nlohmann::json> SharedPresence(const std::string& url_text, const cache::EntryId& id) {
  cache::shared::SharedTierOptions options;
  KILN_ASSIGN_OR_RETURN(options.url, cache::shared::ParseRedisUrlWithEnvironment(url_text));
  cache::shared::ApplyTlsEnvironment(options.client.connection);
  cache::shared::SharedTier tier(options);
  KILN_ASSIGN_OR_RETURN(std::optional<cache::shared::SharedPresence> presence, tier.Where(id));
  nlohmann::json out = {{"url", options.url.Redacted()}, {"present", presence && presence->bytes > 0}};
  if (!presence) {
    out["compiling"] = false;
    return out;
  }
  out["compiling"] = presence->lease_held;
  if (presence->bytes > 0) {
    out["bytes"] = presence->bytes;
    out["expires_in_s"] =
        presence->expires_in_ms < 0 ? nlohmann::json(nullptr) : nlohmann::json(presence->expires_in_ms / 1000.0);
  }
  return out;
}

}  // namespace kiln::tools
