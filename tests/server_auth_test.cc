// kiln serve with and without an auth file: bearer tokens, roles and
// tenant isolation.
#include <gtest/gtest.h>

#include "server/api/auth.h"
#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using nlohmann::json;
using testing::ServerEnv;

using testing::kText;

using testing::Bearer;

std::string WithText(std::string_view token) { return std::string(kText) + Bearer(token); }

ApiOptions WithTokens() {
  std::string file = HashToken("alice-token") + " alice admin\n" +   //
                     HashToken("bob-token") + " bob compile shared\n" +  //
                     HashToken("reader-token") + " alice read\n";
  Result<Authenticator> auth = Authenticator::Parse(file, "test-auth");
  EXPECT_TRUE(auth) << auth.error().message;
  ApiOptions options;
  options.auth = std::move(*auth);
  return options;
}

TEST(ServerAuthTest, OffByDefaultEveryoneIsTenantDefault) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env.Call("POST", "/v1/compile", testing::kAddModule, kText).status, 200);
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/v1/stats"))["tenant"], "default");
  EXPECT_EQ(env.Call("GET", "/v1/stats", "", Bearer("anything")).status, 200) << "tokens are ignored when off";
}

TEST(ServerAuthTest, TokensAndRoles) {
  ServerEnv env(WithTokens());
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env.Call("GET", "/healthz").status, 200) << "health needs no token";
  auto missing = env.Call("GET", "/v1/stats");
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(ServerEnv::Json(missing)["error"]["code"], "unauthorized");
  EXPECT_EQ(missing.headers.Get("WWW-Authenticate"), "Bearer realm=\"kiln\"");
  auto unknown = env.Call("GET", "/v1/stats", "", Bearer("mallory"));
  EXPECT_EQ(unknown.status, 401);
  EXPECT_NE(unknown.headers.Get("WWW-Authenticate").value_or("").find("invalid_token"), std::string_view::npos);
  EXPECT_EQ(env.Call("GET", "/metrics").status, 401);
  // Metrics count every tenant's requests and entries: an operator's, not a tenant reader's.
  EXPECT_EQ(env.Call("GET", "/metrics", "", Bearer("reader-token")).status, 403);
  EXPECT_EQ(env.Call("GET", "/metrics", "", Bearer("bob-token")).status, 403);
  EXPECT_EQ(env.Call("GET", "/metrics", "", Bearer("alice-token")).status, 200);

  auto read_only = env.Call("POST", "/v1/compile", testing::kAddModule, WithText("reader-token"));
  EXPECT_EQ(read_only.status, 403);
  EXPECT_EQ(ServerEnv::Json(read_only)["error"]["code"], "forbidden");
  auto compiled = env.Call("POST", "/v1/compile", testing::kAddModule, WithText("bob-token"));
  ASSERT_EQ(compiled.status, 200);
  const std::string key = ServerEnv::Json(compiled)["key"];
  EXPECT_EQ(env.Call("DELETE", "/v1/executables/" + key, "", Bearer("bob-token")).status, 403) << "delete needs admin";
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/v1/stats", "", Bearer("bob-token")))["tenant"], "bob");
}

TEST(ServerAuthTest, TenantsCannotSeeExecuteOrDeleteEachOthersEntries) {
  ServerEnv env(WithTokens());
  ASSERT_TRUE(env.ok());
  const std::string key =
      ServerEnv::Json(env.Call("POST", "/v1/compile", testing::kAddModule, WithText("bob-token")))["key"];
  EXPECT_EQ(env.Call("GET", "/v1/executables/" + key, "", Bearer("bob-token")).status, 200);
  EXPECT_EQ(env.Call("GET", "/v1/executables/" + key, "", Bearer("alice-token")).status, 404);
  EXPECT_EQ(env.Call("HEAD", "/v1/executables/" + key, "", Bearer("alice-token")).status, 404);
  EXPECT_EQ(env.Call("DELETE", "/v1/executables/" + key, "", Bearer("alice-token")).status, 404);
  json inputs = {{"inputs",
                  {{{"shape", {2, 3}}, {"dtype", "f32"}, {"data", {1, 2, 3, 4, 5, 6}}},
                   {{"shape", {2, 3}}, {"dtype", "f32"}, {"data", {1, 2, 3, 4, 5, 6}}}}}};
  EXPECT_EQ(env.Call("POST", "/v1/executables/" + key + "/execute", inputs.dump(),
                     "Content-Type: application/json\r\n" + Bearer("alice-token")).status,
            404);
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/v1/entries", "", Bearer("alice-token")))["entries"].size(), 0u);
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/v1/entries", "", Bearer("bob-token")))["entries"].size(), 1u);
  // Alice compiling the same module misses: her namespace is her own.
  EXPECT_EQ(ServerEnv::Json(env.Call("POST", "/v1/compile", testing::kAddModule, WithText("alice-token")))["cache"],
            "miss");
}

TEST(ServerAuthTest, SharedNamespaceIsOptIn) {
  ServerEnv env(WithTokens());
  ASSERT_TRUE(env.ok());
  const std::string shared = std::string(kText) + Bearer("bob-token") + "X-Kiln-Namespace: shared\r\n";
  auto compiled = env.Call("POST", "/v1/compile", testing::NegateModule(4), shared);
  ASSERT_EQ(compiled.status, 200) << compiled.body;
  const std::string key = ServerEnv::Json(compiled)["key"];
  // Alice's token is not granted the shared namespace.
  EXPECT_EQ(env.Call("GET", "/v1/stats", "", Bearer("alice-token") + "X-Kiln-Namespace: shared\r\n").status, 403);
  // Entries of the shared namespace are seen only through it (see
  // server_namespace_test.cc for every route and role).
  EXPECT_EQ(env.Call("GET", "/v1/executables/" + key, "", Bearer("alice-token")).status, 404);
  EXPECT_EQ(env.Call("GET", "/v1/executables/" + key, "", Bearer("bob-token")).status, 404);
  EXPECT_EQ(env.Call("GET", "/v1/executables/" + key, "", Bearer("bob-token") + "X-Kiln-Namespace: shared\r\n").status,
            200);
}

TEST(AuthFileTest, ParseErrorsNameTheLine) {
  EXPECT_FALSE(Authenticator::Parse("nothex alice admin\n", "f"));
  Result<Authenticator> bad_role = Authenticator::Parse(HashToken("t") + " alice root\n", "auth.txt");
  ASSERT_FALSE(bad_role);
  EXPECT_NE(bad_role.error().message.find("auth.txt:1: unknown role 'root'"), std::string::npos);
  EXPECT_FALSE(Authenticator::Parse(HashToken("t") + " shared admin\n", "f")) << "'shared' is reserved";
  // 'default' is the tenant of every server without an auth file: on one
  // Redis, such a server's anonymous clients would read and write it.
  Result<Authenticator> named_default = Authenticator::Parse(HashToken("t") + " default admin\n", "auth.txt");
  ASSERT_FALSE(named_default);
  EXPECT_NE(named_default.error().message.find("'default' is reserved"), std::string::npos)
      << named_default.error().message;
  Result<Authenticator> ok = Authenticator::Parse("# comment\n\n" + HashToken("t") + " a read  # trailing\n", "f");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->token_count(), 1u);
  EXPECT_EQ(HashToken("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace kiln::api
