#include "lockstep/digest.h"

#include <openssl/evp.h>

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "lockstep/fast_paths.h"

namespace lockstep {
namespace {

[[noreturn]] void digest_failed(const char* algorithm) {
  std::fprintf(stderr, "lockstep: libcrypto failed to compute a %s digest\n", algorithm);
  std::abort();
}

// Each digest is fetched from its provider once per thread (a fast path,
// lockstep/fast_paths.h): EVP_Digest with an implicit fetch did that on every call, which
// cost more than hashing a short script.
const EVP_MD* fetched(const char* algorithm) {
  if constexpr (!kFastPaths) {
    const EVP_MD* md = EVP_get_digestbyname(algorithm);
    if (md == nullptr) digest_failed(algorithm);
    return md;
  }
  struct Fetched {
    std::map<std::string, EVP_MD*, std::less<>> md;
    ~Fetched() {
      for (auto& [name, md_type] : md) EVP_MD_free(md_type);
    }
  };
  thread_local Fetched cache;
  auto it = cache.md.find(std::string_view(algorithm));
  if (it == cache.md.end()) it = cache.md.emplace(algorithm, EVP_MD_fetch(nullptr, algorithm, nullptr)).first;
  if (it->second == nullptr) digest_failed(algorithm);
  return it->second;
}

void begin(EVP_MD_CTX* ctx, const char* algorithm) {
  if (ctx == nullptr || EVP_DigestInit_ex(ctx, fetched(algorithm), nullptr) != 1) digest_failed(algorithm);
}

void feed(EVP_MD_CTX* ctx, const char* algorithm, std::string_view data) {
  if (EVP_DigestUpdate(ctx, data.data(), data.size()) != 1) digest_failed(algorithm);
}

std::string finish(EVP_MD_CTX* ctx, const char* algorithm) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx, md, &n) != 1) digest_failed(algorithm);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (unsigned int i = 0; i < n; ++i) {
    out[2 * i] = kHex[md[i] >> 4];
    out[2 * i + 1] = kHex[md[i] & 0xf];
  }
  return out;
}

}  // namespace

std::string digest_hex(const char* algorithm, std::string_view data) {
  using Context = std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)>;
  auto hash = [&](EVP_MD_CTX* ctx) {
    begin(ctx, algorithm);
    feed(ctx, algorithm, data);
    return finish(ctx, algorithm);
  };
  if constexpr (!kFastPaths) return hash(Context(EVP_MD_CTX_new(), EVP_MD_CTX_free).get());
  // Each thread reuses one context: allocating one per call cost as much as the fetch.
  thread_local Context ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  return hash(ctx.get());
}

struct DigestStream::Context {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx{EVP_MD_CTX_new(), EVP_MD_CTX_free};
};

DigestStream::DigestStream(const char* algorithm) : ctx_(std::make_unique<Context>()), algorithm_(algorithm) {
  begin(ctx_->ctx.get(), algorithm_);
}

DigestStream::~DigestStream() = default;

void DigestStream::update(std::string_view data) {
  assert(!ended_ && "a digest stream takes no data after hex()");
  feed(ctx_->ctx.get(), algorithm_, data);
}

std::string DigestStream::hex() {
  assert(!ended_ && "hex() ends a digest stream once");
  ended_ = true;
  return finish(ctx_->ctx.get(), algorithm_);
}

}  // namespace lockstep
