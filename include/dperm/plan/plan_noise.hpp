// A plan's noise: how a mechanism's plan calibrates, snaps and checks the
// noise it will add, and the one function that adds it. The samplers are
// noise.hpp's (secure, exact); what a plan makes of them lives here, beside
// the plan, so that noise/ knows no Plan.
#pragma once
#include "dperm/noise/noise.hpp"
#include "dperm/noise/random.hpp"
#include "dperm/plan/plan.hpp"

namespace dperm {

// ---- Sampler failure and the floor on delta (noise.hpp, SAMPLER FAILURE) --
// The largest shift, in units of the draw's sigma, of any noise draw of the
// plan between neighbours.
double MaxShiftPerSigma(const Plan& plan);
// The number of noise draws a release makes, from its plan (an upper bound).
double PlannedNoiseDraws(const Plan& plan);
// log of draws 3 exp(-128): the probability that one of them aborts.
double LogSamplerAbortBound(const Plan& plan);
// Refuses (22023, before any charge) a plan with delta > 0 whose samplers'
// abort probability or truncation exceeds 2^-20 delta.
void CheckDeltaFloor(const Plan& plan);

// ---- Snapping a plan's release (noise.hpp: the grid and its sensitivity) --
// Gradient perturbation's step noise for a per-row contribution C =
// p.sensitivity / 2 and a calibrated multiplier z = sigma/C: sets
// p.noise_bits, p.noise_scale = DyadicNoiseScale(z C') (C' = C + sqrt(dim) u,
// solved by fixed point so that noise_scale >= z C'), p.grid = u,
// p.rounding_inflation, p.sensitivity = 2C', p.noise_multiplier = sigma/C'
// (>= z) and p.sampler.
void PlanExactGaussianSteps(Plan& p, double multiplier);

// The plan's release: v (dim = plan.dim coordinates) snapped to plan.grid
// with the plan's discrete noise (Gaussian: sigma = noise_scale; Laplace:
// scale = noise_scale), or, when plan.noise_bits > 0, the rounded exact
// Gaussian above. Every mechanism's noise goes through here.
void AddPlannedNoise(const Plan& plan, SecureRng& rng, double* v);

// Fills p.grid, p.rounding_inflation, p.sampler and p.sensitivity (+=
// sqrt(dim) grid) for a release whose noise scale is `noise_per_sensitivity`
// times the (inflated) sensitivity; sets p.noise_scale accordingly. The
// scale is linear in the sensitivity for every calibration dperm uses (the
// RDP of CKS20 Thm 14 depends on Delta/sigma only; Laplace: scale =
// sqrt(dim) Delta/eps), so inflating Delta and rescaling is exact.
void SnapPlan(Plan& p, double noise_per_sensitivity);

}  // namespace dperm
