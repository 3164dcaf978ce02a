#include "server/api/auth.h"

#include <openssl/evp.h>

#include <cctype>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "cache/entry.h"
#include "server/api/api_reasons.h"
#include "server/http/header_map.h"

namespace kiln::api {
namespace {

constexpr std::string_view kChallenge = "Bearer realm=\"kiln\"";

bool IsHashText(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && (c < 'a' || c > 'f')) return false;
  }
  return true;
}

Result<Role> ParseRole(std::string_view name) {
  if (name == "read") return Role::kRead;
  if (name == "compile") return Role::kCompile;
  if (name == "admin") return Role::kAdmin;
  return InvalidArgumentError("unknown role '" + std::string(name) + "' (expected read, compile or admin)");
}


}  // namespace

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kRead:
      return "read";
    case Role::kCompile:
      return "compile";
    case Role::kAdmin:
      return "admin";
  }
  return "unknown";
}

std::string HashToken(std::string_view token) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(token.data(), token.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 15]);
  }
  return hex;
}

Result<Authenticator> Authenticator::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return ErrnoError(errno, "auth file " + path + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

Result<Authenticator> Authenticator::Parse(std::string_view text, std::string_view source) {
  Authenticator auth;
  auth.enabled_ = true;
  std::istringstream lines{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string token_hash, tenant, role_name, extra, more;
    if (!(fields >> token_hash)) continue;  // blank
    auto where = [&] { return std::string(source) + ":" + std::to_string(number) + ": "; };
    if (!(fields >> tenant >> role_name)) {
      return InvalidArgumentError(where() + "expected 'SHA256 TENANT ROLE [shared]'");
    }
    fields >> extra >> more;
    if (!IsHashText(token_hash)) {
      return InvalidArgumentError(where() + "the token hash must be 64 lowercase hex digits (sha256 of the token)");
    }
    if (Status named = cache::ValidateName("tenant", tenant); !named) {
      return InvalidArgumentError(where() + named.error().message);
    }
    // 'default' is every unauthenticated server's tenant: on a shared Redis
    // their anonymous clients would share it with this one's.
    if (tenant == service::kSharedTenant || tenant == service::kDefaultTenant) {
      return InvalidArgumentError(where() + "tenant '" + tenant + "' is reserved ('shared' is the shared namespace, " +
                                  "'default' the tenant of servers without an auth file); pick another name");
    }
    Result<Role> role = ParseRole(role_name);
    if (!role) return InvalidArgumentError(where() + role.error().ToString());
    if (!extra.empty() && extra != "shared") {
      return InvalidArgumentError(where() + "unexpected '" + extra + "' (the only option is 'shared')");
    }
    if (!more.empty()) return InvalidArgumentError(where() + "unexpected '" + more + "' after the options");
    Principal principal{.tenant = tenant, .role = *role, .may_use_shared = extra == "shared"};
    if (!auth.tokens_.emplace(token_hash, std::move(principal)).second) {
      return InvalidArgumentError(where() + "this token hash is listed twice");
    }
  }
  return auth;
}

Result<Principal> Authenticator::Authenticate(const http::Request& request) const {
  if (!enabled_) return Principal{.tenant = std::string(service::kDefaultTenant), .role = Role::kAdmin, .may_use_shared = true};
  std::optional<std::string_view> header = request.headers.Get("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (!header || header->size() <= kBearer.size() ||
      !EqualsIgnoreCase(header->substr(0, kBearer.size()), kBearer)) {
    return UnauthenticatedError("missing bearer token: this server requires Authorization: Bearer TOKEN")
        .WithReason(std::string(kUnauthorized))
        .WithChallenge(std::string(kChallenge));
  }
  std::string_view token = header->substr(kBearer.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  auto it = tokens_.find(HashToken(token));
  if (it == tokens_.end()) {
    return UnauthenticatedError("unknown bearer token")
        .WithReason(std::string(kUnauthorized))
        .WithChallenge(std::string(kChallenge) + ", error=\"invalid_token\"");
  }
  return it->second;
}

Result<void> Authorize(const Principal& principal, Role required, const http::Request& request) {
  if (principal.role >= required) return {};
  return PermissionDeniedError(request.method + " " + request.route + " needs role " + std::string(RoleName(required)) +
                               "; the token has role " + std::string(RoleName(principal.role)))
      .WithReason(std::string(kForbidden));
}

Result<std::string> ResolveNamespace(const Principal& principal, const http::Request& request) {
  std::optional<std::string_view> requested = request.headers.Get("X-Kiln-Namespace");
  if (!requested || *requested == "tenant" || requested->empty()) return principal.tenant;
  if (*requested != "shared") {
    return InvalidArgumentError("X-Kiln-Namespace: expected 'tenant' or 'shared', got '" + std::string(*requested) +
                                "'")
        .WithReason(std::string(kBadRequest));
  }
  if (!principal.may_use_shared) {
    return PermissionDeniedError("this token may not use the shared namespace (X-Kiln-Namespace: shared)")
        .WithReason(std::string(kForbidden));
  }
  return std::string(service::kSharedTenant);
}

}  // namespace kiln::api
