// The key of a release's noise and the failed-release path (noise_key.cpp):
// steps 3 and 4 of the pipeline, shared by model releases (release.cpp) and
// releases of noisy sums (release_sums.cpp).
#pragma once

#include "dperm/noise/random.hpp"

#include "base/boundary.hpp"

namespace dperm::pg {

// The key, drawn in the PostgreSQL phase before any C++ object lives: 32
// bytes of pg_strong_random, or the superuser-only seed (docs/design.md
// section 4: a seeded release says so).
struct NoiseKey {
  uint8 bytes[32];
  bool seeded;
  uint64 seed;
};
NoiseKey DrawNoiseKey(bool seeded, uint64 seed);

// The generator of `key` (C++ phase).
dperm::SecureRng NoiseRng(const NoiseKey& key);

// Erases a key once its release has trained or failed.
void WipeNoiseKey(NoiseKey* key);

// The failed-release path, in one place: runs `body(rng)` (phase 2) with
// the generator of `key`, then wipes the key whatever happened, then
// raises any failure (a core exception, or a PostgreSQL error a pass raised
// through CallPostgres, re-raised as it was) once no C++ frame is left.
// After the charge every such failure is paid for: nothing here depends on
// whether the release was charged.
template <typename Body>
void RunKeyed(NoiseKey* key, Body&& body) {
  CoreError failure;
  CaptureCore(
      [&] {
        dperm::SecureRng rng = NoiseRng(*key);
        body(rng);
      },
      &failure);
  WipeNoiseKey(key);
  if (failure.raised) ReportCoreError(failure);
}

}  // namespace dperm::pg
