#ifndef RINGLEADER_COMMON_EVAL_METRICS_H_
#define RINGLEADER_COMMON_EVAL_METRICS_H_

// The job's evaluation metrics from its ranks' sums. Each rank reports, per
// metric, the sum over the samples (or tokens) of its own test shard and how
// many there were (v1::MetricSum); the job's value is the sum of the ranks'
// sums over the sum of their counts, so every sample counts once whatever
// the shard sizes. A language model's perplexity and bits per token are
// derived from the pooled loss, not pooled themselves: the mean of exp(loss)
// over ranks is not exp of the mean loss.
//
// No LibTorch: the coordinator pools and checks, the worker only sums.
// Pure functions and a value class; thread-compatible.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/repeated_field.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {

// Limits of one list of MetricSums in a progress report (the proto's).
inline constexpr int kMaxMetricSums = 16;
inline constexpr size_t kMaxMetricNameBytes = 32;

// The largest count (samples, tokens, correct predictions) one rank may
// report: 2^50 is far past any test shard, keeps every count exact as a
// double, and lets the coordinator add up 8192 ranks' counts without
// passing INT64_MAX.
inline constexpr int64_t kMaxReportedCount = int64_t{1} << 50;

// a + b, or INT64_MAX where that would pass it (a bad or restored report
// cannot wrap a pooled count into a negative one). For counts >= 0.
int64_t SaturatingAdd(int64_t a, int64_t b);

using MetricSums = google::protobuf::RepeatedPtrField<v1::MetricSum>;

// OK, or InvalidArgument naming `field` (e.g. "test_metrics") and the entry:
// at most kMaxMetricSums entries, names of 1..32 characters of [a-z0-9_],
// no name twice, sums finite, counts in [0, kMaxReportedCount].
absl::Status CheckMetricSums(absl::string_view field, const MetricSums& sums);

// True for metrics that are fractions of samples ("accuracy",
// "top5_accuracy"): shown as percentages.
bool IsAccuracyMetric(absl::string_view name);

// Adds up the ranks' sums of one evaluation (the final test, or one epoch's).
class MetricPool {
 public:
  // One rank's sums. A name the rank repeats counts once (its first entry).
  void AddRank(const MetricSums& sums);

  // The pooled metrics in the first rank's order; for
  // TASK_KIND_LANGUAGE_MODEL, "perplexity" = exp(loss) and "bits_per_token"
  // = loss / ln 2 right after "loss" (unless a rank sent them itself). Left
  // out: a metric some rank did not send, one whose counts are 0 on every
  // rank, and a value that is not finite (exp of a diverged loss), so every
  // value prints as JSON. Empty when no rank was added.
  std::vector<v1::Metric> Metrics(const v1::TaskSpec& task) const;

 private:
  struct Total {
    std::string name;
    double sum = 0;
    int64_t count = 0;
    int ranks = 0;  // Ranks that sent it.
  };

  std::vector<Total> totals_;  // In the first rank's order.
  int ranks_ = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_EVAL_METRICS_H_
