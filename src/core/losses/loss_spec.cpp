// The loss table (loss_spec.hpp): the list of losses.def joined to each
// loss's LossSpecOf.
#include "dperm/losses/loss_spec.hpp"

namespace dperm {

// Each is defined in the loss's own file.
#define DPERM_LOSS(id, name, aggregate, label, link) \
  template <>                                        \
  const LossSpec& LossSpecOf<LossKind::id>();
#include "dperm/options/losses.def"
#undef DPERM_LOSS

const LossSpec& LossSpecFor(LossKind loss) {
  switch (loss) {
#define DPERM_LOSS(id, name, aggregate, label, link) \
  case LossKind::id:                                 \
    return LossSpecOf<LossKind::id>();
#include "dperm/options/losses.def"
#undef DPERM_LOSS
  }
  throw Error(ErrorKind::kInternal, "unknown loss");
}

LossParams LossParamsOf(const Options& options) {
  LossParams p;
  p.huber_delta = options.huber_delta;
  p.target_bound = options.target_bound;
  p.classes = options.classes;
  return p;
}

LossConstants LossConstantsFor(LossKind loss, const Options& options, double R) {
  return LossSpecFor(loss).Constants(LossParamsOf(options), R);
}

}  // namespace dperm
