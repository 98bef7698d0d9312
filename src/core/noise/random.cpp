// ChaCha20 (RFC 8439) and the SecureRng built on it.
#include "dperm/noise/random.hpp"

#include <utility>

#include <cmath>
#include <cstring>

#include "dperm/util/interrupt.hpp"

namespace dperm {
namespace {

// Left rotation of a 32-bit word (RFC 8439 §2.1, "<<<").
inline uint32_t Rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// The quarter round of RFC 8439 §2.1, applied to four words of the state.
inline void QuarterRound(uint32_t* s, int a, int b, int c, int d) {
  s[a] += s[b];
  s[d] ^= s[a];
  s[d] = Rotl(s[d], 16);
  s[c] += s[d];
  s[b] ^= s[c];
  s[b] = Rotl(s[b], 12);
  s[a] += s[b];
  s[d] ^= s[a];
  s[d] = Rotl(s[d], 8);
  s[c] += s[d];
  s[b] ^= s[c];
  s[b] = Rotl(s[b], 7);
}

// Reads a little-endian 32-bit word, as RFC 8439 §2.3 lays out key and nonce.
inline uint32_t LoadLe32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}

// SplitMix64 step (Steele, Lea & Flood 2014): expands a test seed into key
// words. Not cryptographic; only FromSeed uses it.
inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr double kTwoPi = 6.283185307179586476925286766559;

}  // namespace

// RFC 8439 §2.3: constants, key, counter, nonce; 10 double rounds (column
// then diagonal quarter rounds); add the input state; serialize little-endian.
void ChaCha20Block(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3],
                   uint8_t out[64]) {
  uint32_t in[16] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};
  for (int i = 0; i < 8; ++i) in[4 + i] = key[i];
  in[12] = counter;
  for (int i = 0; i < 3; ++i) in[13 + i] = nonce[i];
  uint32_t x[16];
  std::memcpy(x, in, sizeof x);
  for (int round = 0; round < 10; ++round) {
    QuarterRound(x, 0, 4, 8, 12);
    QuarterRound(x, 1, 5, 9, 13);
    QuarterRound(x, 2, 6, 10, 14);
    QuarterRound(x, 3, 7, 11, 15);
    QuarterRound(x, 0, 5, 10, 15);
    QuarterRound(x, 1, 6, 11, 12);
    QuarterRound(x, 2, 7, 8, 13);
    QuarterRound(x, 3, 4, 9, 14);
  }
  for (int i = 0; i < 16; ++i) {
    const uint32_t w = x[i] + in[i];
    out[4 * i + 0] = uint8_t(w);
    out[4 * i + 1] = uint8_t(w >> 8);
    out[4 * i + 2] = uint8_t(w >> 16);
    out[4 * i + 3] = uint8_t(w >> 24);
  }
}

// Keys the stream; the first block is produced lazily on first use.
SecureRng::SecureRng(const std::array<uint8_t, 32>& key)
    : nonce_{0, 0, 0}, counter_(0), block_{}, used_(64) {
  for (int i = 0; i < 8; ++i) key_[i] = LoadLe32(key.data() + 4 * i);
}

// Test-only key: four SplitMix64 outputs of `seed`, little-endian.
SecureRng SecureRng::FromSeed(uint64_t seed) {
  std::array<uint8_t, 32> key{};
  uint64_t state = seed;
  for (int w = 0; w < 4; ++w) {
    const uint64_t v = SplitMix64(state);
    for (int b = 0; b < 8; ++b) key[8 * w + b] = uint8_t(v >> (8 * b));
  }
  return SecureRng(key);
}

// Next keystream block. Counter and nonce together act as one 128-bit block
// counter, so the keystream never repeats under one key (RFC 8439 §4 forbids
// reusing a (key, nonce, counter) triple).
void SecureRng::Refill() {
  ChaCha20Block(key_, counter_, nonce_, block_);
  if (++counter_ == 0) {
    for (int i = 0; i < 3 && ++nonce_[i] == 0; ++i) {
    }
  }
  used_ = 0;
}

// Eight keystream bytes, little-endian; a block is 8 such words exactly.
uint64_t SecureRng::NextU64() {
  if (used_ + 8 > 64) Refill();
  uint64_t v = 0;
  for (int b = 0; b < 8; ++b) v |= uint64_t(block_[used_ + b]) << (8 * b);
  used_ += 8;
  return v;
}

// Top 53 bits as k·2^-53, redrawing k = 0, so the value lies in (0,1) and both
// log U and 1/U stay finite.
double SecureRng::Uniform01() {
  for (;;) {
    const uint64_t k = NextU64() >> 11;
    if (k != 0) return double(k) * 0x1.0p-53;
  }
}

uint64_t SecureRng::UniformIndex(uint64_t n) {
  if (n <= 1) return 0;  // one outcome: no randomness needed
  // Accept k below the largest multiple of n that fits in 2^64.
  const uint64_t limit = n == 0 ? 0 : UINT64_MAX - (UINT64_MAX % n + 1) % n;
  for (;;) {
    uint64_t k = NextU64();
    if (k <= limit) return k % n;
  }
}

void SampleWithoutReplacement(SecureRng& rng, int64_t n, int64_t m, std::vector<int64_t>& scratch,
                              std::vector<int64_t>& out) {
  if (static_cast<int64_t>(scratch.size()) != n) {
    scratch.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; i++) scratch[static_cast<size_t>(i)] = i;
    CountWork(uint64_t(n));
  }
  // The first m slots of a partial Fisher-Yates shuffle are a uniform
  // m-subset in uniform order, whatever permutation `scratch` held before.
  out.resize(static_cast<size_t>(m));
  for (int64_t k = 0; k < m; k++) {
    int64_t j = k + static_cast<int64_t>(rng.UniformIndex(static_cast<uint64_t>(n - k)));
    std::swap(scratch[static_cast<size_t>(k)], scratch[static_cast<size_t>(j)]);
    out[static_cast<size_t>(k)] = scratch[static_cast<size_t>(k)];
    CountWork(16);  // a draw from the generator
  }
}

std::vector<int64_t> RandomPermutation(SecureRng& rng, int64_t n) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) p[static_cast<size_t>(i)] = i;
  for (int64_t i = n - 1; i > 0; i--) {
    int64_t j = static_cast<int64_t>(rng.UniformIndex(static_cast<uint64_t>(i + 1)));
    std::swap(p[static_cast<size_t>(i)], p[static_cast<size_t>(j)]);
    CountWork(16);  // a draw from the generator
  }
  return p;
}

}  // namespace dperm
