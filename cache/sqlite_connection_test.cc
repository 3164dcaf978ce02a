#include "cache/sqlite_connection.h"

#include <gtest/gtest.h>

#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::TempDir;

TEST(SqliteConnectionTest, OpensInWalModeAndRoundTripsValues) {
  TempDir dir;
  auto db = Connection::Open(dir.File("a.db"), {});
  ASSERT_TRUE(db) << db.error().message;
  auto mode = (*db)->Prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode);
  ASSERT_TRUE(*mode->Step());
  EXPECT_EQ(mode->ColumnText(0), "wal");

  ASSERT_TRUE((*db)->Execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB)"));
  {
    auto insert = (*db)->Prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4)");
    ASSERT_TRUE(insert);
    std::string blob("a\0b", 3);
    ASSERT_TRUE(insert->Bind(1, int64_t{-5}).Bind(2, 2.5).BindText(3, "hi").BindBlob(4, blob).Run());
    // Run() resets, so the same statement runs again.
    ASSERT_TRUE(insert->Bind(1, int64_t{7}).Bind(2, 0.0).BindText(3, "").BindBlob(4, "").Run());
  }
  auto select = (*db)->Prepare("SELECT i, r, s, b FROM t ORDER BY i");
  ASSERT_TRUE(select);
  ASSERT_TRUE(*select->Step());
  EXPECT_EQ(select->ColumnInt(0), -5);
  EXPECT_EQ(select->ColumnDouble(1), 2.5);
  EXPECT_EQ(select->ColumnText(2), "hi");
  EXPECT_EQ(select->ColumnBlob(3), std::string_view("a\0b", 3));
  ASSERT_TRUE(*select->Step());
  EXPECT_FALSE(select->ColumnIsNull(3));  // empty blob is not NULL
  EXPECT_FALSE(*select->Step());
}

TEST(SqliteConnectionTest, ReusesPreparedStatements) {
  TempDir dir;
  auto db = Connection::Open(dir.File("a.db"), {});
  ASSERT_TRUE(db);
  sqlite3_stmt* first = nullptr;
  {
    auto statement = (*db)->Prepare("SELECT 1");
    ASSERT_TRUE(statement);
    first = sqlite3_next_stmt((*db)->raw(), nullptr);
  }
  auto again = (*db)->Prepare("SELECT 1");
  ASSERT_TRUE(again);
  int statements = 0;
  for (sqlite3_stmt* s = sqlite3_next_stmt((*db)->raw(), nullptr); s; s = sqlite3_next_stmt((*db)->raw(), s)) {
    if (std::string_view(sqlite3_sql(s)) == "SELECT 1") ++statements;
  }
  EXPECT_EQ(statements, 1);
  EXPECT_NE(first, nullptr);
}

TEST(SqliteConnectionTest, ErrorsNameTheStatement) {
  TempDir dir;
  auto db = Connection::Open(dir.File("a.db"), {});
  ASSERT_TRUE(db);
  auto bad = (*db)->Prepare("SELEKT nonsense");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("SELEKT nonsense"), std::string::npos) << bad.error().message;
  auto missing = (*db)->Execute("INSERT INTO nowhere VALUES (1)");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("no such table"), std::string::npos) << missing.error().message;
  auto bind = (*db)->Prepare("SELECT ?1");
  ASSERT_TRUE(bind);
  auto step = bind->Bind(5, int64_t{1}).Step();
  ASSERT_FALSE(step);
  EXPECT_NE(step.error().message.find("bind"), std::string::npos) << step.error().message;
}

TEST(SqliteConnectionTest, OpenFailsOnNonDatabaseFile) {
  TempDir dir;
  const std::string path = dir.File("not-a-db");
  FILE* file = std::fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs("this is not an sqlite database, just some text that is long enough to matter", file);
  std::fclose(file);
  auto db = Connection::Open(path, {});
  ASSERT_FALSE(db);
  EXPECT_NE(db.error().message.find(path), std::string::npos) << db.error().message;
}

TEST(SqliteConnectionTest, TransactionRollsBackUnlessCommitted) {
  TempDir dir;
  auto db = Connection::Open(dir.File("a.db"), {});
  ASSERT_TRUE(db);
  ASSERT_TRUE((*db)->Execute("CREATE TABLE t (i INTEGER)"));
  {
    auto transaction = Transaction::Begin(**db);
    ASSERT_TRUE(transaction);
    ASSERT_TRUE((*db)->Execute("INSERT INTO t VALUES (1)"));
  }
  EXPECT_EQ(*(*db)->QueryInt("SELECT count(*) FROM t"), 0);
  {
    auto transaction = Transaction::Begin(**db);
    ASSERT_TRUE(transaction);
    ASSERT_TRUE((*db)->Execute("INSERT INTO t VALUES (1)"));
    ASSERT_TRUE(transaction->Commit());
  }
  EXPECT_EQ(*(*db)->QueryInt("SELECT count(*) FROM t"), 1);
}

TEST(SqliteConnectionTest, TheFailureOfATransactionOutlivesItsRollback) {
  TempDir dir;
  auto db = Connection::Open(dir.File("a.db"), {});
  ASSERT_TRUE(db);
  ASSERT_TRUE((*db)->Execute("CREATE TABLE t (b BLOB)"));
  const int64_t pages = *(*db)->QueryInt("PRAGMA page_count");
  ASSERT_TRUE((*db)->Execute("PRAGMA max_page_count=" + std::to_string(pages)));  // a full "disk"
  (*db)->ClearLastFailure();
  {
    auto transaction = Transaction::Begin(**db);
    ASSERT_TRUE(transaction);
    auto insert = (*db)->Prepare("INSERT INTO t VALUES (zeroblob(100000))");
    ASSERT_TRUE(insert);
    ASSERT_FALSE(insert->Run());
  }  // rolled back here: a successful call, which must not hide why
  EXPECT_EQ((*db)->last_failure(), SQLITE_FULL);
  EXPECT_EQ(*(*db)->QueryInt("SELECT count(*) FROM t"), 0);
}

TEST(SqliteConnectionTest, OpensSqliteUrisReadOnly) {
  TempDir dir;
  {
    auto db = Connection::Open(dir.File("a.db"), {});
    ASSERT_TRUE(db);
    ASSERT_TRUE((*db)->Execute("CREATE TABLE t (i INTEGER)"));
    EXPECT_FALSE((*db)->read_only());
  }
  auto db = Connection::Open("file:" + dir.File("a.db") + "?mode=ro", {});
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_TRUE((*db)->read_only());
  EXPECT_FALSE((*db)->Execute("INSERT INTO t VALUES (1)"));
  EXPECT_EQ((*db)->last_failure() & 0xff, SQLITE_READONLY);
}

}  // namespace
}  // namespace kiln::cache
