// SHA-256 of a history, by OpenSSL's libcrypto: reports carry the digest so two runs can
// be compared byte for byte at a glance. A recorded run hashes its whole history, which
// with a portable implementation was a third of the run; libcrypto uses the CPU's SHA
// instructions where it has them.
#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "lockstep/reports/report.h"

namespace lockstep::reports {

std::string sha256_hex(const std::string& data) {
  // The digest is fetched from its provider once, and each thread reuses one context:
  // EVP_Digest with an implicit fetch did both on every call, which cost more than
  // hashing a short script.
  static EVP_MD* const kMd = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  static thread_local std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (kMd == nullptr || ctx == nullptr || EVP_DigestInit_ex(ctx.get(), kMd, nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 || EVP_DigestFinal_ex(ctx.get(), md, &n) != 1 ||
      n != 32) {
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
