#include "cache/shared/value_mac.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace kiln::cache::shared {
namespace {

constexpr std::string_view kMagic = "KILNMAC1";
constexpr size_t kMacBytes = 32;

std::string Mac(std::string_view key, std::string_view bundle) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(bundle.data()),
       bundle.size(), mac, &length);
  return std::string(reinterpret_cast<const char*>(mac), length);
}

}  // namespace

std::string SignValue(std::string_view key, std::string_view bundle) {
  std::string value(kMagic);
  value += Mac(key, bundle);
  value += bundle;
  return value;
}

bool IsSignedValue(std::string_view value) {
  return value.size() >= kMagic.size() + kMacBytes && value.substr(0, kMagic.size()) == kMagic;
}

std::string_view UnsignedPart(std::string_view value) {
  return IsSignedValue(value) ? value.substr(kMagic.size() + kMacBytes) : value;
}

Result<std::string_view> OpenSignedValue(std::string_view key, std::string_view value) {
  if (!IsSignedValue(value)) return DataLossError("shared value carries no MAC, and this server requires one");
  const std::string_view bundle = value.substr(kMagic.size() + kMacBytes);
  const std::string expected = Mac(key, bundle);
  if (CRYPTO_memcmp(expected.data(), value.data() + kMagic.size(), kMacBytes) != 0) {
    return DataLossError("shared value's MAC does not verify under this server's key");
  }
  return bundle;
}

}  // namespace kiln::cache::shared
