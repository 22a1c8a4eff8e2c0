// observability_micro: what issue 36's worker-side parts cost per use, in
// one process, each against the same work without it (side by side, the
// median of several rounds):
//   - the phase clock: one optimizer step's phase changes (a step number,
//     and the 7 spans of a step, each a PhaseScope as in the timeline's
//     spans) with a PhaseClock against without one;
//   - the job log: one LOG(INFO) line with the job log capture serving a
//     job (the line copied into its queue) against with no capture.
// The per-step cost over a step time (cost_bench.sh measures those) is the
// fraction of throughput the part can take.
//
//   bazel run -c opt //bench/observability:observability_micro
#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "glog/logging.h"
#include "worker/logs/job_log_capture.h"
#include "worker/timeline/phase.h"

namespace ringleader {
namespace {

constexpr Phase kStepPhases[] = {Phase::kDataLoading, Phase::kForward,
                                 Phase::kBackward,    Phase::kAllReduceWait,
                                 Phase::kBufferSync,  Phase::kOptimizer,
                                 Phase::kDataLoading};

// Nanoseconds per call of `fn` over `n` calls, the median of `rounds`.
template <typename Fn>
double NsPerCall(int rounds, int n, Fn fn) {
  std::vector<double> per;
  for (int r = 0; r < rounds; ++r) {
    const absl::Time start = absl::Now();
    for (int i = 0; i < n; ++i) fn(i);
    per.push_back(absl::ToDoubleNanoseconds(absl::Now() - start) / n);
  }
  std::sort(per.begin(), per.end());
  return per[per.size() / 2];
}

// One step's phase changes on `clock` (null: none, what the timeline's
// spans do with --report_phases=false): the spans' own PhaseScope.
void StepPhases(PhaseClock* clock, int step) {
  if (clock != nullptr) clock->SetStep(step);
  for (Phase p : kStepPhases) {
    PhaseScope span(clock, p);
    asm volatile("" ::: "memory");
  }
}

void PhaseClockCost() {
  PhaseClock clock;
  const int n = 1'000'000;
  const double without = NsPerCall(7, n, [](int i) { StepPhases(nullptr, i); });
  const double with = NsPerCall(7, n, [&](int i) { StepPhases(&clock, i); });
  std::printf(
      "phase clock: %.1f ns per optimizer step (%.1f without); at a 1 ms "
      "step %.4f%% of it\n",
      with, without, (with - without) / 1e6 * 100);
}

void JobLogCost() {
  const int n = 20'000;
  // glog's own work, to stderr's file: logging to a file, as a daemon does.
  FLAGS_logtostderr = false;
  FLAGS_alsologtostderr = false;
  const double without =
      NsPerCall(5, n, [](int i) { LOG(INFO) << "line " << i << " of a job"; });
  JobLogCapture capture(JobLogCapture::Limits{});
  capture.BeginJob("bench");
  capture.SetRank(1, 0);
  const double with = NsPerCall(5, n, [&](int i) {
    LOG(INFO) << "line " << i << " of a job";
    // Drained as the shipper drains it, off the logging thread in the
    // worker; here it keeps the queue from filling.
    if (i % 1000 == 999) capture.Take(1000, 1 << 20);
  });
  std::printf(
      "job log: %.0f ns per logged line with the capture (%.0f without): "
      "%.0f ns more per line\n",
      with, without, with - without);
}

}  // namespace
}  // namespace ringleader

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_log_dir = "/tmp";
  ringleader::PhaseClockCost();
  ringleader::JobLogCost();
  return 0;
}
