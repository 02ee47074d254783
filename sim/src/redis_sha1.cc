// SHA-1, which names scripts for EVALSHA and redis.sha1hex, by OpenSSL's libcrypto.
// Security is irrelevant here; what matters is producing the same digests as
// redis-server (lowercase hex).
#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "redis_scripting.h"

namespace lockstep::sim {

std::string sha1_hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(data.data(), data.size(), md, &n, EVP_sha1(), nullptr) != 1 || n != 20) {
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
