// Cryptographically secure randomness for dperm's noise (docs/design.md section 4: "noise
// comes from a cryptographically secure generator"). The stream is ChaCha20 as
// specified in RFC 8439; production keys come from pg_strong_random() in
// src/pg, FromSeed exists only for tests and the superuser-only seed option.
#pragma once

#include "dperm/util/errors.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace dperm {

// The ChaCha20 block function of RFC 8439 §2.3 (20 rounds): 32-byte key as 8
// little-endian words, 32-bit block counter, 96-bit nonce as 3 little-endian
// words; writes the 64-byte serialized keystream block. Exposed for the RFC
// test vector.
void ChaCha20Block(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3],
                   uint8_t out[64]);

// A ChaCha20 keystream used as a random number generator. Not thread-safe;
// one instance per training call.
class SecureRng {
 public:
  // Keyed generator; nonce zero, block counter 0.
  explicit SecureRng(const std::array<uint8_t, 32>& key);

  // Deterministic generator whose key is the SplitMix64 expansion of `seed`.
  // For tests and seeded (never "private") runs only.
  static SecureRng FromSeed(uint64_t seed);

  // The next 8 keystream bytes, little-endian.
  uint64_t NextU64();

  // Uniform on the open interval (0,1): k·2^-53 for 53 random bits k ≠ 0.
  double Uniform01();

  // Uniform on {0, ..., n-1}, n >= 1, without modulo bias (rejection).
  uint64_t UniformIndex(uint64_t n);

 private:
  void Refill();

  uint32_t key_[8];
  uint32_t nonce_[3];
  uint32_t counter_;
  uint8_t block_[64];
  int used_;  // bytes of block_ already handed out
};

// m distinct indices drawn uniformly from {0, ..., n-1} (a uniformly random
// m-subset, in random order), 0 <= m <= n. `scratch` is reused between calls
// (a partial Fisher-Yates shuffle of 0..n-1 that it keeps as a permutation).
void SampleWithoutReplacement(SecureRng& rng, int64_t n, int64_t m, std::vector<int64_t>& scratch,
                              std::vector<int64_t>& out);

// A uniformly random permutation of 0..n-1 (Fisher-Yates).
std::vector<int64_t> RandomPermutation(SecureRng& rng, int64_t n);

}  // namespace dperm
