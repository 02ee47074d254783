#include "lockstep/digest.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

namespace lockstep {

std::string digest_hex(const char* algorithm, std::string_view data) {
  // Each digest is fetched from its provider once per thread, and each thread reuses one
  // context: EVP_Digest with an implicit fetch did both on every call, which cost more
  // than hashing a short script.
  struct Fetched {
    std::map<std::string, EVP_MD*, std::less<>> md;
    ~Fetched() {
      for (auto& [name, md_type] : md) EVP_MD_free(md_type);
    }
  };
  thread_local Fetched fetched;
  thread_local std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  auto it = fetched.md.find(std::string_view(algorithm));
  if (it == fetched.md.end()) it = fetched.md.emplace(algorithm, EVP_MD_fetch(nullptr, algorithm, nullptr)).first;
  EVP_MD* md_type = it->second;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (md_type == nullptr || ctx == nullptr || EVP_DigestInit_ex(ctx.get(), md_type, nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 || EVP_DigestFinal_ex(ctx.get(), md, &n) != 1) {
    std::fprintf(stderr, "lockstep: libcrypto failed to compute a %s digest\n", algorithm);
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

}  // namespace lockstep
