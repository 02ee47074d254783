// Digests by OpenSSL's libcrypto, as lowercase hex: SHA-256 of histories (reports compare
// runs byte for byte by it) and SHA-1 of scripts (EVALSHA and redis.sha1hex must name a
// script exactly as redis-server does). libcrypto uses the CPU's SHA instructions where
// it has them; a portable implementation took a third of a recorded run.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace lockstep {

// `algorithm` is an OpenSSL digest name ("SHA256", "SHA1"). Aborts if libcrypto cannot
// compute it: a wrong digest would silently break determinism checks and EVALSHA.
std::string digest_hex(const char* algorithm, std::string_view data);

// The same digest of data that arrives in pieces: a history is hashed while it is still
// being written. hex() of the pieces equals digest_hex() of their concatenation.
class DigestStream {
 public:
  explicit DigestStream(const char* algorithm);
  ~DigestStream();
  DigestStream(const DigestStream&) = delete;
  DigestStream& operator=(const DigestStream&) = delete;

  void update(std::string_view data);
  // Ends the stream; update() must not be called afterwards.
  std::string hex();

 private:
  struct Context;
  std::unique_ptr<Context> ctx_;
  const char* algorithm_;
  bool ended_ = false;
};

}  // namespace lockstep
