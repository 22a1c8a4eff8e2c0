#ifndef RINGLEADER_COMMON_CLOCK_H_
#define RINGLEADER_COMMON_CLOCK_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ringleader {

// The seam through which leases, deadlines and timers read time, so tests
// drive them with a FakeClock instead of sleeping. Implementations are
// thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

// Wall-clock time.
class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  // A process-wide instance; stateless, so sharing it is safe.
  static Clock* Get() {
    static RealClock clock;
    return &clock;
  }
};

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_CLOCK_H_
