#include "bench/crosshost/netdelay/netdelay_options.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ringleader {

absl::StatusOr<NetdelayOptions> MakeNetdelayOptions(
    int64_t queue, double delay_ms, int64_t max_packets, std::string ready_file,
    const std::vector<std::string>& extra) {
  if (extra.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unexpected argument '", extra[1], "' (netdelay takes only flags)"));
  }
  if (queue < 0 || queue > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--queue must be in 0..65535, got ", queue));
  }
  // NaN fails both comparisons, so the check is written to catch it.
  if (!(delay_ms >= 0 && delay_ms <= kMaxDelayMs)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--delay_ms must be in 0..", kMaxDelayMs, ", got ", delay_ms));
  }
  if (max_packets < 1 || max_packets > kMaxHeldPackets) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_packets must be in 1..", kMaxHeldPackets, ", got ",
                     max_packets));
  }
  NetdelayOptions options;
  options.queue = static_cast<uint16_t>(queue);
  options.delay = std::chrono::nanoseconds(std::llround(delay_ms * 1e6));
  options.max_packets = static_cast<size_t>(max_packets);
  options.ready_file = std::move(ready_file);
  return options;
}

}  // namespace ringleader
