// The namespace rule of `kiln serve`, route by route: a request sees
// exactly one namespace (its tenant's, or the shared one with the grant and
// X-Kiln-Namespace: shared), nothing falls through from one namespace to
// another, and an entry of another namespace answers exactly as a key that
// exists nowhere. Checked for tokens of every role with and without the
// `shared` grant, on the loop-thread fast paths and the worker paths alike.
#include <gtest/gtest.h>

#include <regex>

#include "server/api/auth.h"
#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using nlohmann::json;
using testing::RawResponse;
using testing::ServerEnv;

struct Token {
  std::string name;
  std::string tenant;
  Role role;
  bool shared;
};

// Every role, with and without the grant; "owner" fills the namespaces.
const std::vector<Token>& Tokens() {
  static const std::vector<Token> tokens = {
      {"read-plain", "erin", Role::kRead, false},        {"read-shared", "frank", Role::kRead, true},
      {"compile-plain", "dave", Role::kCompile, false},  {"compile-shared", "gina", Role::kCompile, true},
      {"admin-plain", "alice", Role::kAdmin, false},     {"admin-shared", "carol", Role::kAdmin, true},
  };
  return tokens;
}

ApiOptions WithNamespaceTokens() {
  std::string file = HashToken("owner") + " bob compile shared\n";
  for (const Token& token : Tokens()) {
    file += HashToken(token.name) + " " + token.tenant + " " + std::string(RoleName(token.role)) +
            (token.shared ? " shared\n" : "\n");
  }
  Result<Authenticator> auth = Authenticator::Parse(file, "namespace-test-auth");
  EXPECT_TRUE(auth) << auth.error().message;
  ApiOptions options;
  options.auth = std::move(*auth);
  return options;
}

using testing::Bearer;
constexpr std::string_view kSharedHeader = "X-Kiln-Namespace: shared\r\n";
using testing::kText;
constexpr std::string_view kJsonType = "Content-Type: application/json\r\n";
constexpr std::string_view kNowhere = "0123456789abcdef0123456789abcdef";

std::string JsonCompileBody(std::string_view hlo) { return json{{"hlo", hlo}, {"chip", "v5e"}}.dump(); }

std::string AddInputs() {
  return json{{"inputs",
               {{{"shape", {2, 3}}, {"dtype", "f32"}, {"data", {1, 2, 3, 4, 5, 6}}},
                {{"shape", {2, 3}}, {"dtype", "f32"}, {"data", {1, 2, 3, 4, 5, 6}}}}}}
      .dump();
}

// A response with every occurrence of `key` replaced, for comparing the
// answer about one key with the answer about another.
std::string Masked(const RawResponse& response, const std::string& key) {
  std::string text = std::to_string(response.status) + " " +
                     std::string(response.headers.Get("Content-Type").value_or("")) + "\n" + response.body;
  return std::regex_replace(text, std::regex(key), "KEY");
}

class NamespaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = std::make_unique<ServerEnv>(WithNamespaceTokens());
    ASSERT_TRUE(env_->ok());
    const std::string shared = std::string(kText) + Bearer("owner") + std::string(kSharedHeader);
    // The shared namespace holds two entries: one compiled from a text body
    // (fast-path material), one from a JSON body; bob's own holds a third.
    auto text = env_->Call("POST", "/v1/compile", testing::kAddModule, shared);
    ASSERT_EQ(text.status, 200) << text.body;
    shared_key_ = ServerEnv::Json(text)["key"];
    auto json_body = env_->Call("POST", "/v1/compile", JsonCompileBody(testing::NegateModule(4)),
                                std::string(kJsonType) + Bearer("owner") + std::string(kSharedHeader));
    ASSERT_EQ(json_body.status, 200) << json_body.body;
    shared_json_key_ = ServerEnv::Json(json_body)["key"];
    auto own = env_->Call("POST", "/v1/compile", testing::NegateModule(8), std::string(kText) + Bearer("owner"));
    ASSERT_EQ(own.status, 200) << own.body;
    bobs_key_ = ServerEnv::Json(own)["key"];
    // Served once more, so the entries are in the executable index and the
    // hot set: the loop thread's fast paths know them.
    ASSERT_EQ(env_->Call("GET", "/v1/executables/" + shared_key_, "", Bearer("owner") + std::string(kSharedHeader)).status,
              200);
    ASSERT_EQ(env_->Call("GET", "/v1/executables/" + bobs_key_, "", Bearer("owner")).status, 200);
  }

  // Asserts that `method target` answers for `key` exactly as for a key
  // that exists nowhere (status, type and body but for the key itself).
  void ExpectLikeNowhere(std::string_view method, const std::string& path_before, const std::string& key,
                         const std::string& path_after, std::string_view body, const std::string& headers) {
    SCOPED_TRACE(std::string(method) + " " + path_before + key + path_after + " " + headers);
    auto answer = env_->Call(method, path_before + key + path_after, body, headers);
    auto nowhere = env_->Call(method, path_before + std::string(kNowhere) + path_after, body, headers);
    EXPECT_NE(answer.status, 200);
    EXPECT_EQ(Masked(answer, key), Masked(nowhere, std::string(kNowhere)));
  }

  std::unique_ptr<ServerEnv> env_;
  std::string shared_key_;
  std::string shared_json_key_;
  std::string bobs_key_;
};

TEST_F(NamespaceTest, OtherNamespacesAreInvisibleWithoutTheHeader) {
  for (const Token& token : Tokens()) {
    SCOPED_TRACE(token.name);
    const std::string auth = Bearer(token.name);
    for (const std::string& key : {shared_key_, shared_json_key_, bobs_key_}) {
      const std::string executables = "/v1/executables/";
      ExpectLikeNowhere("GET", executables, key, "", "", auth);
      ExpectLikeNowhere("GET", executables, key, "", "", auth + "Accept: application/json\r\n");
      ExpectLikeNowhere("HEAD", executables, key, "", "", auth);
      ExpectLikeNowhere("DELETE", executables, key, "", "", auth);
      ExpectLikeNowhere("POST", executables, key, "/execute", AddInputs(), std::string(kJsonType) + auth);
      ExpectLikeNowhere("POST", executables, key, "/time", "", auth);
      ExpectLikeNowhere("GET", executables, key, "/trace", "", auth);
      EXPECT_EQ(env_->Call("GET", executables + key + "/trace", "", auth).status, 404);
      EXPECT_EQ(env_->Call("POST", executables + key + "/time", "", auth).status, token.role >= Role::kCompile ? 404 : 403);
      EXPECT_EQ(env_->Call("GET", executables + key, "", auth).status, 404);
      EXPECT_EQ(env_->Call("DELETE", executables + key, "", auth).status, token.role == Role::kAdmin ? 404 : 403);
      EXPECT_EQ(env_->Call("POST", executables + key + "/execute", AddInputs(), std::string(kJsonType) + auth).status,
                token.role >= Role::kCompile ? 404 : 403);
    }
    auto explained = env_->Call("POST", "/v1/explain", testing::kAddModule, std::string(kText) + auth);
    ASSERT_EQ(explained.status, 200) << explained.body;
    EXPECT_EQ(ServerEnv::Json(explained)["cached"], false);
    EXPECT_TRUE(ServerEnv::Json(explained)["nearest"].is_null()) << "no other namespace's entry is 'nearest'";
    auto entries = env_->Call("GET", "/v1/entries", "", auth);
    ASSERT_EQ(entries.status, 200);
    EXPECT_EQ(ServerEnv::Json(entries)["entries"].size(), 0u);
    auto stats = ServerEnv::Json(env_->Call("GET", "/v1/stats", "", auth));
    EXPECT_EQ(stats["tenant"], token.tenant);
    EXPECT_EQ(stats["entries"], 0);
    EXPECT_EQ(stats["by_chip"].size(), 0u);

    // A compile misses and stores into the token's own namespace: through
    // the loop-thread fast path's door (a text body) and the worker's (JSON).
    auto text = env_->Call("POST", "/v1/compile", testing::kAddModule, std::string(kText) + auth);
    auto json_body =
        env_->Call("POST", "/v1/compile", JsonCompileBody(testing::NegateModule(4)), std::string(kJsonType) + auth);
    if (token.role == Role::kRead) {
      EXPECT_EQ(text.status, 403);
      EXPECT_EQ(json_body.status, 403);
      continue;
    }
    ASSERT_EQ(text.status, 200) << text.body;
    EXPECT_EQ(ServerEnv::Json(text)["cache"], "miss");
    EXPECT_EQ(ServerEnv::Json(text)["key"], shared_key_) << "the key does not depend on the namespace";
    ASSERT_EQ(json_body.status, 200) << json_body.body;
    EXPECT_EQ(ServerEnv::Json(json_body)["cache"], "miss");
    // Now the token's own copy answers; the shared one is still not listed.
    EXPECT_EQ(env_->Call("GET", "/v1/executables/" + shared_key_, "", auth).status, 200);
    auto listed = ServerEnv::Json(env_->Call("GET", "/v1/entries", "", auth))["entries"];
    EXPECT_EQ(listed.size(), 2u);
    EXPECT_EQ(ServerEnv::Json(env_->Call("POST", "/v1/compile", testing::kAddModule, std::string(kText) + auth))["cache"],
              "hit");
  }
}

TEST_F(NamespaceTest, TheSharedNamespaceNeedsTheGrant) {
  const std::string executables = "/v1/executables/";
  for (const Token& token : Tokens()) {
    if (token.shared) continue;
    SCOPED_TRACE(token.name);
    const std::string auth = Bearer(token.name) + std::string(kSharedHeader);
    EXPECT_EQ(env_->Call("GET", executables + shared_key_, "", auth).status, 403);
    auto head = env_->Call("HEAD", executables + shared_key_, "", auth);
    EXPECT_EQ(head.status, 403);
    EXPECT_TRUE(head.body.empty());
    EXPECT_EQ(env_->Call("DELETE", executables + shared_key_, "", auth).status, 403);
    EXPECT_EQ(env_->Call("POST", executables + shared_key_ + "/execute", AddInputs(), std::string(kJsonType) + auth).status,
              403);
    EXPECT_EQ(env_->Call("POST", "/v1/explain", testing::kAddModule, std::string(kText) + auth).status, 403);
    EXPECT_EQ(env_->Call("POST", "/v1/compile", testing::kAddModule, std::string(kText) + auth).status, 403);
    EXPECT_EQ(env_->Call("GET", "/v1/entries", "", auth).status, 403);
    EXPECT_EQ(env_->Call("GET", "/v1/stats", "", auth).status, 403);
  }
  EXPECT_EQ(env_->Call("GET", "/v1/stats", "", Bearer("read-shared") + "X-Kiln-Namespace: other\r\n").status, 400);
}

TEST_F(NamespaceTest, GrantedTokensUseTheSharedNamespaceOnlyThroughTheHeader) {
  const std::string executables = "/v1/executables/";
  for (const Token& token : Tokens()) {
    if (!token.shared) continue;
    SCOPED_TRACE(token.name);
    const std::string auth = Bearer(token.name) + std::string(kSharedHeader);
    EXPECT_EQ(env_->Call("GET", executables + shared_key_, "", auth).status, 200);
    EXPECT_EQ(env_->Call("GET", executables + shared_key_, "", auth + "Accept: application/json\r\n").status, 200);
    EXPECT_EQ(env_->Call("HEAD", executables + shared_json_key_, "", auth).status, 200);
    ExpectLikeNowhere("GET", executables, bobs_key_, "", "", auth);  // bob's own is not shared
    auto explained = ServerEnv::Json(env_->Call("POST", "/v1/explain", testing::kAddModule, std::string(kText) + auth));
    EXPECT_EQ(explained["cached"], true);
    auto stats = ServerEnv::Json(env_->Call("GET", "/v1/stats", "", auth));
    EXPECT_EQ(stats["tenant"], "shared");
    EXPECT_EQ(stats["entries"], 2);
    EXPECT_EQ(ServerEnv::Json(env_->Call("GET", "/v1/entries", "", auth))["entries"].size(), 2u);
    auto execute = env_->Call("POST", executables + shared_key_ + "/execute", AddInputs(), std::string(kJsonType) + auth);
    if (token.role == Role::kRead) {
      EXPECT_EQ(execute.status, 403);
      continue;
    }
    EXPECT_EQ(execute.status, 200) << execute.body;
    // The same body as the owner's: the loop thread's fast path answers.
    auto text = ServerEnv::Json(env_->Call("POST", "/v1/compile", testing::kAddModule, std::string(kText) + auth));
    EXPECT_EQ(text["cache"], "hit");
    EXPECT_EQ(text["fast_path"], true);
    // A JSON body is parsed on a worker: still a hit.
    auto parsed = ServerEnv::Json(env_->Call("POST", "/v1/compile", JsonCompileBody(testing::NegateModule(4)),
                                             std::string(kJsonType) + auth));
    EXPECT_EQ(parsed["cache"], "hit");
    // Without the header the same token is back in its own namespace.
    ExpectLikeNowhere("GET", executables, shared_key_, "", "", Bearer(token.name));
  }
  // An admin with the grant deletes from the shared namespace; then it is gone for everyone.
  EXPECT_EQ(env_->Call("DELETE", executables + shared_key_, "", Bearer("admin-shared") + std::string(kSharedHeader)).status,
            204);
  ExpectLikeNowhere("GET", executables, shared_key_, "", "", Bearer("owner") + std::string(kSharedHeader));
}

TEST(NamespaceAuthOffTest, TheSharedNamespaceIsSeparateWithoutAuthToo) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  auto compiled = env.Call("POST", "/v1/compile", testing::kAddModule,
                           std::string(kText) + std::string(kSharedHeader));
  ASSERT_EQ(compiled.status, 200) << compiled.body;
  const std::string key = ServerEnv::Json(compiled)["key"];
  EXPECT_EQ(env.Call("GET", "/v1/executables/" + key, "", std::string(kSharedHeader)).status, 200);
  EXPECT_EQ(env.Call("GET", "/v1/executables/" + key).status, 404) << "tenant default does not see 'shared'";
  EXPECT_EQ(ServerEnv::Json(env.Call("POST", "/v1/compile", testing::kAddModule, kText))["cache"], "miss");
}

}  // namespace
}  // namespace kiln::api
