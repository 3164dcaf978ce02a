// Bearer-token authentication, roles and tenants for `kiln serve`.
//
// Without an auth file every request acts as tenant "default" with role
// admin (the server listens on loopback by default). With one, every route
// but /healthz needs `Authorization: Bearer TOKEN`, and the file says each
// token's tenant and role. The file stores only SHA-256 hashes of tokens,
// one token a line (blank lines and '#' comments are ignored):
//
//   # sha256(token)                                                  tenant  role     [shared]
//   9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 team-a  compile
//   60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752 ci      admin    shared
//
// `kiln serve --hash-token TOKEN` (or `printf %s TOKEN | sha256sum`) prints
// a token's hash. Roles: read < compile < admin. `shared` lets the token
// send `X-Kiln-Namespace: shared` to use the shared namespace; the tenant
// name "shared" is reserved for it.
//
// The namespace rule: every request reads and writes exactly one namespace,
// the token's tenant, or the shared one when it sends the header and has the
// grant. Nothing falls through from one namespace to another, so an entry
// of another namespace answers exactly as a key that exists nowhere (404).
//
// An Authenticator is immutable after Load: thread-safe. Errors from Load
// name the file and line.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "base/status.h"
#include "server/http/request.h"
#include "server/service/tenants.h"

namespace kiln::api {

enum class Role { kRead = 0, kCompile = 1, kAdmin = 2 };
std::string_view RoleName(Role role);  // "read", "compile", "admin"

// Who is asking.
struct Principal {
  std::string tenant;
  Role role = Role::kAdmin;
  bool may_use_shared = true;
};

// Lowercase hex SHA-256 of `token`.
std::string HashToken(std::string_view token);

class Authenticator {
 public:
  // Authentication off: everyone is tenant "default", role admin.
  static Authenticator Disabled() { return Authenticator(); }
  // Reads the file described above.
  static Result<Authenticator> Load(const std::string& path);
  // The same, from the file's text (`source` names it in errors).
  static Result<Authenticator> Parse(std::string_view text, std::string_view source);

  bool enabled() const { return enabled_; }
  size_t token_count() const { return tokens_.size(); }

  // The principal of `request`'s bearer token; 401 when it is missing or unknown.
  Result<Principal> Authenticate(const http::Request& request) const;

 private:
  Authenticator() = default;
  bool enabled_ = false;
  std::unordered_map<std::string, Principal> tokens_;  // by token hash
};

// 403 unless `principal` has at least `required` ("POST /v1/compile needs
// role compile; the token has role read").
Result<void> Authorize(const Principal& principal, Role required, const http::Request& request);

// The one namespace whose entries the request reads and writes: the
// principal's own, or the shared namespace with X-Kiln-Namespace: shared
// (403 when the token may not; 400 for another value).
Result<std::string> ResolveNamespace(const Principal& principal, const http::Request& request);

}  // namespace kiln::api
