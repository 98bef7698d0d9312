// Unit tests for ChaCha20 and SecureRng (include/dperm/noise/random.hpp).
#include "dperm/noise/random.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <vector>

namespace dperm {
namespace {

// RFC 8439 §2.3.2: key 00..1f, nonce 00 00 00 09 00 00 00 4a 00 00 00 00,
// block counter 1.
TEST(ChaCha20Block, Rfc8439Section232TestVector) {
  uint32_t key[8];
  for (int i = 0; i < 8; ++i) {
    const uint32_t b = 4 * i;
    key[i] = b | ((b + 1) << 8) | ((b + 2) << 16) | ((b + 3) << 24);
  }
  const uint32_t nonce[3] = {0x09000000u, 0x4a000000u, 0x00000000u};
  const uint8_t expected[64] = {0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd,
                                0x1f, 0xa3, 0x20, 0x71, 0xc4, 0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0,
                                0x68, 0x03, 0x04, 0x22, 0xaa, 0x9a, 0xc3, 0xd4, 0x6c, 0x4e, 0xd2,
                                0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa, 0x09, 0x14, 0xc2, 0xd7, 0x05,
                                0xd9, 0x8b, 0x02, 0xa2, 0xb5, 0x12, 0x9c, 0xd1, 0xde, 0x16, 0x4e,
                                0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e};
  uint8_t out[64];
  ChaCha20Block(key, 1, nonce, out);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], expected[i]) << "byte " << i;
}

// RFC 8439 Appendix A.1, test vector #1: all-zero key, nonce and counter.
TEST(ChaCha20Block, Rfc8439AppendixA1ZeroKey) {
  const uint32_t key[8] = {};
  const uint32_t nonce[3] = {};
  const uint8_t expected_head[16] = {0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90,
                                     0x40, 0x5d, 0x6a, 0xe5, 0x53, 0x86, 0xbd, 0x28};
  uint8_t out[64];
  ChaCha20Block(key, 0, nonce, out);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], expected_head[i]);
  // The zero-key generator returns the same bytes, little-endian.
  SecureRng rng(std::array<uint8_t, 32>{});
  EXPECT_EQ(rng.NextU64(), 0x903df1a0ade0b876ULL);
}

// The stream is counter 0, 1, ... under nonce zero; the expected words were
// produced independently with `openssl enc -chacha20` (key 00..1f, IV 0).
TEST(SecureRng, StreamMatchesOpenSslAcrossBlocks) {
  std::array<uint8_t, 32> key;
  for (int i = 0; i < 32; ++i) key[i] = uint8_t(i);
  SecureRng rng(key);
  uint64_t w[17];
  for (auto& x : w) x = rng.NextU64();
  EXPECT_EQ(w[0], 0x6a19c5d97d2bfd39ULL);
  EXPECT_EQ(w[7], 0x0c415b48a06227c2ULL);   // last word of block 0
  EXPECT_EQ(w[8], 0xd1a6e6ad3142b818ULL);   // first word of block 1
  EXPECT_EQ(w[16], 0xd5924aa7dc2df242ULL);  // first word of block 2
}

TEST(SecureRng, FromSeedIsDeterministic) {
  SecureRng a = SecureRng::FromSeed(42), b = SecureRng::FromSeed(42);
  SecureRng c = SecureRng::FromSeed(43);
  int differ = 0;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.NextU64();
    EXPECT_EQ(x, b.NextU64());
    differ += x != c.NextU64();
  }
  EXPECT_GT(differ, 95);
}

TEST(SecureRng, Uniform01IsInOpenUnitInterval) {
  SecureRng rng = SecureRng::FromSeed(1);
  const int n = 200000;
  double sum = 0.0, lo = 1.0, hi = 0.0;
  for (int i = 0; i < n; ++i) {
    const double u = rng.Uniform01();
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  // Mean 1/2, standard error sqrt(1/12/n).
  EXPECT_NEAR(sum / n, 0.5, 5.0 * std::sqrt(1.0 / 12.0 / n));
  EXPECT_LT(lo, 1e-4);
  EXPECT_GT(hi, 1.0 - 1e-4);
}

}  // namespace
}  // namespace dperm

// UniformIndex covers {0..n-1} evenly; SampleWithoutReplacement returns
// distinct indices whose inclusion frequency is m/n for every index.
TEST(SecureRng, UniformIndexAndSubsetsAreUniform) {
  dperm::SecureRng rng = dperm::SecureRng::FromSeed(11);
  const int n = 7, draws = 70000;
  std::vector<int> counts(n, 0);
  for (int i = 0; i < draws; i++) counts[rng.UniformIndex(n)]++;
  for (int c : counts) EXPECT_NEAR(c, draws / n, 5 * std::sqrt(draws / n));  // ~5 sd
  std::vector<int64_t> scratch, subset;
  std::vector<int> included(n, 0);
  const int m = 3, rounds = 20000;
  for (int r = 0; r < rounds; r++) {
    dperm::SampleWithoutReplacement(rng, n, m, scratch, subset);
    ASSERT_EQ(subset.size(), size_t(m));
    std::vector<int64_t> sorted = subset;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_TRUE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
    for (int64_t i : subset) included[i]++;
  }
  for (int c : included)
    EXPECT_NEAR(c, rounds * m / double(n), 5 * std::sqrt(rounds * 0.43 * 0.57));
  std::vector<int64_t> p = dperm::RandomPermutation(rng, 1000);
  std::sort(p.begin(), p.end());
  for (int i = 0; i < 1000; i++) EXPECT_EQ(p[i], i);
}
