// The mechanism registry: one line per algorithm.
#include "dperm/registry.hpp"

#include "dperm/bolton.hpp"
#include "dperm/dp_accmd.hpp"
#include "dperm/dp_gd.hpp"
#include "dperm/dp_lssgd.hpp"
#include "dperm/dp_sgd.hpp"
#include "dperm/dp_svrg.hpp"
#include "dperm/dp_svrg_pp.hpp"
#include "dperm/objective_approx.hpp"
#include "dperm/objective_perturbation.hpp"
#include "dperm/output_gd.hpp"
#include "dperm/rrpsgd.hpp"

namespace dperm {

const Mechanism& MechanismFor(Algorithm algorithm) {
  static const OutputGd output_gd;
  static const DpSgd dp_sgd;
  static const Rrpsgd rrpsgd;
  static const DpLssgd dp_lssgd;
  static const Bolton bolton;
  static const DpGd dp_gd;
  static const DpSvrg dp_svrg;
  static const DpSvrgPp dp_svrg_pp;
  static const DpAccmd dp_accmd;
  static const ObjectivePerturbation objective;
  static const ObjectiveApprox objective_approx;
  switch (algorithm) {
    case Algorithm::kOutputGd: return output_gd;
    case Algorithm::kDpSgd: return dp_sgd;
    case Algorithm::kRrpsgd: return rrpsgd;
    case Algorithm::kDpLssgd: return dp_lssgd;
    case Algorithm::kBolton: return bolton;
    case Algorithm::kDpGd: return dp_gd;
    case Algorithm::kDpSvrg: return dp_svrg;
    case Algorithm::kDpSvrgPp: return dp_svrg_pp;
    case Algorithm::kDpAccmd: return dp_accmd;
    case Algorithm::kObjective: return objective;
    case Algorithm::kObjectiveApprox: return objective_approx;
  }
  throw Error(ErrorKind::kInternal, "unknown algorithm");
}

}  // namespace dperm
