#ifndef RINGLEADER_BENCH_NETDELAY_NETDELAY_OPTIONS_H_
#define RINGLEADER_BENCH_NETDELAY_NETDELAY_OPTIONS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ringleader {

// netdelay's settings, checked (bench/crosshost/netdelay/netdelay_main.cc).
struct NetdelayOptions {
  uint16_t queue = 0;  // The NFQUEUE number the packet filter queues to.
  std::chrono::nanoseconds delay{0};
  size_t max_packets = 0;  // Held at once; more are dropped.
  std::string ready_file;  // Written once the queue is bound ("" = none).
};

inline constexpr double kMaxDelayMs = 60'000;
inline constexpr int64_t kMaxHeldPackets = 1 << 20;

// The flags' values as given, checked: the queue in 0..65535, a finite delay
// in 0..kMaxDelayMs ms, max_packets in 1..kMaxHeldPackets, no positional
// arguments (`extra`: what the flag parser left, the program name first).
// An error names the flag and the range.
absl::StatusOr<NetdelayOptions> MakeNetdelayOptions(
    int64_t queue, double delay_ms, int64_t max_packets, std::string ready_file,
    const std::vector<std::string>& extra);

}  // namespace ringleader

#endif  // RINGLEADER_BENCH_NETDELAY_NETDELAY_OPTIONS_H_
