// SHA-256 of a history, by OpenSSL's libcrypto: reports carry the digest so two runs can
// be compared byte for byte at a glance. A recorded run hashes its whole history, which
// with a portable implementation was a third of the run; libcrypto uses the CPU's SHA
// instructions where it has them.
#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

#include "lockstep/reports/report.h"

namespace lockstep::reports {

std::string sha256_hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(data.data(), data.size(), md, &n, EVP_sha256(), nullptr) != 1 || n != 32) {
    std::fputs("lockstep: libcrypto failed to compute a SHA-256\n", stderr);
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

}  // namespace lockstep::reports
