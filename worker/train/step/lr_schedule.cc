#include "worker/train/step/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace ringleader {

int64_t DecayHorizon(const v1::LrSchedule& schedule, int64_t planned_steps) {
  return schedule.decay_steps() > 0 ? schedule.decay_steps() : planned_steps;
}

double LearningRateAt(const v1::LrSchedule& s, double lr, int64_t step,
                      int64_t planned_steps) {
  const int64_t warmup = std::max<int64_t>(0, s.warmup_steps());
  // (t + 1) / W: the first step already moves, and step W - 1 is at the peak
  // (nanoGPT's and torchvision's warmups never take a step at lr 0 either).
  if (step < warmup) {
    return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  }
  const double floor = s.min_lr();
  const int64_t t = step - warmup;
  switch (s.kind()) {
    case v1::LR_SCHEDULE_KIND_STEP: {
      const double gamma = s.gamma() == 0 ? 0.1 : s.gamma();
      const int64_t k = t / std::max<int64_t>(1, s.step_size());
      return std::max(floor, lr * std::pow(gamma, static_cast<double>(k)));
    }
    case v1::LR_SCHEDULE_KIND_COSINE:
    case v1::LR_SCHEDULE_KIND_LINEAR: {
      const int64_t horizon = DecayHorizon(s, planned_steps);
      // Past the horizon (or a planned horizon inside the warmup): the floor.
      if (step >= horizon) return floor;
      const double p =
          static_cast<double>(t) / static_cast<double>(horizon - warmup);
      if (s.kind() == v1::LR_SCHEDULE_KIND_LINEAR) {
        return lr - (lr - floor) * p;
      }
      return floor + (lr - floor) * 0.5 * (1 + std::cos(M_PI * p));
    }
    default:  // CONSTANT, UNSPECIFIED.
      return lr;
  }
}

}  // namespace ringleader
