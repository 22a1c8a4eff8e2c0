#ifndef RINGLEADER_CLI_STRAGGLER_H_
#define RINGLEADER_CLI_STRAGGLER_H_

// The straggler rule of `ringctl watch`: a rank whose mean step time over its
// last report window exceeds the median over ranks by more than a factor.
// Pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader::cli {

inline constexpr double kDefaultStragglerFactor = 1.5;

struct Straggler {
  int32_t rank = 0;
  double step_time_ms = 0;
  double median_ms = 0;
  double ratio = 0;  // step_time_ms / median_ms.
};

// The median of the step times of the ranks still training that reported
// one (finished ranks and zero, negative or non-finite times are left out);
// the mean of the two middle ones for an even count. nullopt when none.
std::optional<double> MedianStepTimeMs(const v1::JobProgress& progress);

// The ranks whose step time is more than `factor` x that median, by rank.
// None with fewer than two ranks reporting, or a zero median.
std::vector<Straggler> FindStragglers(const v1::JobProgress& progress,
                                      double factor);

// " STRAGGLER rank 1 (2.1x)" for the status line; "" when none.
std::string StragglerMarker(const std::vector<Straggler>& stragglers);

// One line per straggler, e.g.
//   straggler: rank 1 step time 310.0 ms is 2.07x the median 150.0 ms
//   (factor 1.5)
// (on one line), each ending in "\n".
std::string StragglerMessages(const std::vector<Straggler>& stragglers,
                              double factor);

// --straggler_factor: a finite number >= 1.
absl::StatusOr<double> ParseStragglerFactor(absl::string_view text);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_STRAGGLER_H_
