// SHA-1 (FIPS 180-1), which names scripts for EVALSHA and redis.sha1hex. Security is
// irrelevant here; what matters is producing the same digests as redis-server.
#include <array>
#include <cstdint>
#include <string>

#include "redis_scripting.h"

namespace lockstep::sim {

namespace {

uint32_t rotl(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

void sha1_block(std::array<uint32_t, 5>& h, const unsigned char* p) {
  uint32_t w[80];
  for (int i = 0; i < 16; ++i)
    w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 |
           uint32_t(p[4 * i + 2]) << 8 | uint32_t(p[4 * i + 3]);
  for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; ++i) {
    uint32_t f, k;
    if (i < 20) f = (b & c) | (~b & d), k = 0x5A827999;
    else if (i < 40) f = b ^ c ^ d, k = 0x6ED9EBA1;
    else if (i < 60) f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
    else f = b ^ c ^ d, k = 0xCA62C1D6;
    const uint32_t t = rotl(a, 5) + f + e + k + w[i];
    e = d, d = c, c = rotl(b, 30), b = a, a = t;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

}  // namespace

std::string sha1_hex(const std::string& data) {
  std::array<uint32_t, 5> h{0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::string msg = data;
  const uint64_t bits = uint64_t(data.size()) * 8;
  msg.push_back(static_cast<char>(0x80));
  while (msg.size() % 64 != 56) msg.push_back('\0');
  for (int i = 7; i >= 0; --i) msg.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  for (size_t off = 0; off < msg.size(); off += 64)
    sha1_block(h, reinterpret_cast<const unsigned char*>(msg.data()) + off);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(40, '0');
  for (int i = 0; i < 40; ++i) out[i] = kHex[(h[i / 8] >> (28 - 4 * (i % 8))) & 0xf];
  return out;
}

}  // namespace lockstep::sim
