// Forward-only schema migrations, tracked with PRAGMA user_version.
//
// Migration N is schema/migrations/NNNN_name.sql, embedded into the binary
// at build time (EmbeddedMigrations()). A database at version k gets
// migrations k+1..target applied, each in its own transaction together with
// the user_version bump, so a crash leaves it at some whole version. A
// database from a newer kiln (version above every known migration) is
// refused rather than touched. Migrations run with foreign keys off (so one
// may rebuild a table), checked before each commit. A fresh database is
// switched to incremental auto-vacuum before its first table exists.
//
// Thread-compatible: runs on the caller's connection.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/status.h"
#include "cache/sqlite_connection.h"

namespace kiln::cache {

struct Migration {
  int version;            // 1, 2, ... without gaps
  std::string_view name;  // the file name, for errors
  std::string_view sql;
};

// The migrations under schema/migrations, in version order. Static data.
std::span<const Migration> EmbeddedMigrations();

// The latest version in `migrations` (0 when empty).
int LatestVersion(std::span<const Migration> migrations);

// PRAGMA user_version of the open database.
Result<int> SchemaVersion(Connection& connection);

// Brings the database to `target_version` (default: the latest). Fails on a
// gap in the versions, a target below the current version (forward-only),
// a database newer than every migration, or a failing statement (the
// failing migration is rolled back; earlier ones stay applied).
Status Migrate(Connection& connection, std::span<const Migration> migrations,
               int target_version = -1);

}  // namespace kiln::cache
