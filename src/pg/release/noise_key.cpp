// The key of a release's noise (noise_key.hpp).
#include "dperm/noise/random.hpp"

#include <array>
#include <cstring>

#include "release/noise_key.hpp"

extern "C" {
#include "port.h"
}

namespace dperm::pg {

NoiseKey DrawNoiseKey(bool seeded, uint64 seed) {
  NoiseKey key;
  key.seeded = seeded;
  key.seed = seed;
  memset(key.bytes, 0, sizeof key.bytes);
  if (!seeded && !pg_strong_random(key.bytes, sizeof key.bytes))
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("could not generate a random key for the noise")));
  return key;
}

dperm::SecureRng NoiseRng(const NoiseKey& key) {
  if (key.seeded) return dperm::SecureRng::FromSeed(key.seed);
  std::array<uint8_t, 32> k;
  std::memcpy(k.data(), key.bytes, sizeof key.bytes);
  return dperm::SecureRng(k);
}

void WipeNoiseKey(NoiseKey* key) { explicit_bzero(key->bytes, sizeof key->bytes); }

}  // namespace dperm::pg
