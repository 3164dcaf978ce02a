#include "cache/migrations.h"

#include <string>

namespace kiln::cache {

namespace {

// Applies migrations current+1..target_version, each in its own transaction.
Status ApplyMigrations(Connection& connection, std::span<const Migration> migrations, int current,
                       int target_version) {
  for (int version = current + 1; version <= target_version; ++version) {
    const Migration& migration = migrations[version - 1];
    KILN_ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(connection));
    // Another process may have migrated between our read and the lock.
    KILN_ASSIGN_OR_RETURN(int locked_version, SchemaVersion(connection));
    if (locked_version >= version) continue;
    Status applied = connection.Execute(migration.sql);
    if (!applied) {
      return applied.error().WithContext("migration " + std::string(migration.name));
    }
    KILN_ASSIGN_OR_RETURN(int64_t broken_references,
                          connection.QueryInt("SELECT count(*) FROM pragma_foreign_key_check"));
    if (broken_references != 0) {
      return InternalError("migration " + std::string(migration.name) + " left " +
                           std::to_string(broken_references) + " rows referencing missing rows");
    }
    KILN_RETURN_IF_ERROR(connection.Execute("PRAGMA user_version=" + std::to_string(version)));
    KILN_RETURN_IF_ERROR(transaction.Commit());
  }
  return Ok();
}

}  // namespace

int LatestVersion(std::span<const Migration> migrations) {
  return migrations.empty() ? 0 : migrations.back().version;
}

Result<int> SchemaVersion(Connection& connection) {
  KILN_ASSIGN_OR_RETURN(int64_t version, connection.QueryInt("PRAGMA user_version"));
  return static_cast<int>(version);
}

Status Migrate(Connection& connection, std::span<const Migration> migrations, int target_version) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return InternalError("migrations: " + std::string(migrations[i].name) + " has version " +
                           std::to_string(migrations[i].version) + ", expected " + std::to_string(i + 1) +
                           " (versions must run 1, 2, ... without gaps)");
    }
  }
  const int latest = LatestVersion(migrations);
  if (target_version < 0) target_version = latest;
  if (target_version > latest) {
    return InvalidArgumentError("migrations: target version " + std::to_string(target_version) +
                                " is beyond the latest known migration " + std::to_string(latest));
  }
  KILN_ASSIGN_OR_RETURN(int current, SchemaVersion(connection));
  if (current > latest) {
    return FailedPreconditionError("migrations: database schema version " + std::to_string(current) +
                                   " is newer than this kiln knows (" + std::to_string(latest) +
                                   "); refusing to open it");
  }
  if (current > target_version) {
    return FailedPreconditionError("migrations: database is at version " + std::to_string(current) +
                                   ", cannot go back to " + std::to_string(target_version) +
                                   " (migrations are forward-only)");
  }
  if (current == 0 && target_version > 0) {
    // Switching to WAL already wrote the header, so the mode only takes
    // effect through a VACUUM (instant on an empty file).
    KILN_RETURN_IF_ERROR(connection.Execute("PRAGMA auto_vacuum=INCREMENTAL; VACUUM"));
  }
  // Rebuilding a table (SQLite's procedure for a change ALTER TABLE cannot
  // make) drops the parent of foreign keys, which would cascade deletes:
  // migrations run with foreign keys off, checked before each commit. The
  // pragma is a no-op inside a transaction, so it is set around them.
  KILN_ASSIGN_OR_RETURN(int64_t foreign_keys, connection.QueryInt("PRAGMA foreign_keys"));
  if (current < target_version && foreign_keys != 0) {
    KILN_RETURN_IF_ERROR(connection.Execute("PRAGMA foreign_keys=OFF"));
  }
  Status applied = ApplyMigrations(connection, migrations, current, target_version);
  if (current < target_version && foreign_keys != 0) {
    Status restored = connection.Execute("PRAGMA foreign_keys=ON");
    if (applied && !restored) return restored;
  }
  return applied;
}

}  // namespace kiln::cache
