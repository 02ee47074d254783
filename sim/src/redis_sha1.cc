// SHA-1, which names scripts for EVALSHA and redis.sha1hex, by OpenSSL's libcrypto.
// Security is irrelevant here; what matters is producing the same digests as
// redis-server (lowercase hex).
#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "redis_scripting.h"

namespace lockstep::sim {

std::string sha1_hex(const std::string& data) {
  // The digest is fetched from its provider once, and each thread reuses one context:
  // EVP_Digest with an implicit fetch did both on every call, which cost more than
  // hashing a short script.
  static EVP_MD* const kMd = EVP_MD_fetch(nullptr, "SHA1", nullptr);
  static thread_local std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (kMd == nullptr || ctx == nullptr || EVP_DigestInit_ex(ctx.get(), kMd, nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 || EVP_DigestFinal_ex(ctx.get(), md, &n) != 1 ||
      n != 20) {
    std::fputs("lockstep: libcrypto failed to compute a SHA-1\n", stderr);
    std::abort();
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (unsigned int i = 0; i < n; ++i) {
    out[2 * i] = kHex[md[i] >> 4];
    out[2 * i + 1] = kHex[md[i] & 0xf];
  }
  return out;
}

}  // namespace lockstep::sim
