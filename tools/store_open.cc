#include "tools/store_open.h"

#include <cstdlib>

namespace kiln::tools {

CLI::Option* AddDbOption(CLI::App* cmd, std::string* db, const std::string& help) {
  return cmd->add_option("--db", *db, help + " (default $KILN_DB, else " + std::string(cache::kDefaultStorePath) + ")");
}

std::string ResolveDbPath(const std::string& given) {
  if (!given.empty()) return given;
  const char* from_environment = std::getenv("KILN_DB");
  if (from_environment != nullptr && *from_environment != '\0') return from_environment;
  return std::string(cache::kDefaultStorePath);
}

Result<std::unique_ptr<cache::CacheStore>> OpenToolStore(const std::string& given, StoreAccess access) {
  const std::string db = ResolveDbPath(given);
  cache::CacheStoreOptions options;
  options.path = db;
  options.dictionary_training_puts = 0;
  options.create_if_missing = access == StoreAccess::kCreateIfMissing;
  auto store = cache::CacheStore::Open(std::move(options));
  if (!store && store.error().code == ErrorCode::kNotFound) {
    return NotFoundError("no cache database at " + db + " (check --db or KILN_DB; inspecting never creates one)");
  }
  return store;
}

}  // namespace kiln::tools
