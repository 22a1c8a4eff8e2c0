#include "coordinator/report_checks.h"

#include <cmath>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/job_spec_validator.h"
#include "common/quote_for_error.h"

namespace ringleader {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

absl::Status OutOfRange(absl::string_view what, absl::string_view field,
                        int64_t value, int64_t lo, int64_t hi) {
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": ", field, " must be in [", lo, ", ", hi, "] (got ", value, ")"));
}

absl::Status InRange(absl::string_view what, absl::string_view field,
                     int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi) return OutOfRange(what, field, value, lo, hi);
  return absl::OkStatus();
}

absl::Status CheckPathUnder(const std::string& dir, const std::string& path) {
  constexpr absl::string_view kWhat = "commit checkpoint";
  if (dir.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(kWhat, ": the job has no checkpoint_dir"));
  }
  const std::string prefix =
      absl::EndsWith(dir, "/") ? dir : absl::StrCat(dir, "/");
  // Clean (no "." or ".." component): the prefix test then means "inside".
  if (path.size() > 4096 || !IsCleanAbsolutePath(path) ||
      !absl::StartsWith(path, prefix) || path.size() == prefix.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        kWhat,
        ": path must be a normalized absolute path inside the job's "
        "checkpoint_dir ",
        QuoteForError(dir), " (got ", QuoteForError(path), ")"));
  }
  return absl::OkStatus();
}

absl::Status Finite(absl::string_view field, double value, bool nonnegative) {
  if (std::isfinite(value) && (!nonnegative || value >= 0)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("progress report: ", field, " must be finite",
                   nonnegative ? " and >= 0" : "", " (got ", value, ")"));
}

}  // namespace

int64_t MaxJobSteps(const v1::JobSpec& spec, int64_t train_size,
                    int64_t generation) {
  if (train_size < 0) return kMaxStepsUnknownSize;
  const int64_t batch = std::max<int64_t>(spec.batch_size(), 1);
  const int64_t epochs = std::max<int64_t>(spec.epochs(), 1);
  const int64_t per_epoch =
      train_size / batch + 1 + std::max<int64_t>(generation, 0);
  if (per_epoch > kInt64Max / epochs) return kInt64Max;
  return per_epoch * epochs;
}

absl::Status CheckCommitNumbers(const v1::JobSpec& spec, int64_t train_size,
                                const v1::CommitCheckpointRequest& r) {
  constexpr absl::string_view kWhat = "commit checkpoint";
  if (absl::Status s = CheckPathUnder(spec.checkpoint_dir(), r.path());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = InRange(kWhat, "epoch", r.epoch(), 0, spec.epochs());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = InRange(kWhat, "step", r.step(), 0,
                               MaxJobSteps(spec, train_size, r.generation()));
      !s.ok()) {
    return s;
  }
  return InRange(kWhat, "epoch_sample_offset", r.epoch_sample_offset(), 0,
                 train_size < 0 ? kMaxStepsUnknownSize : train_size);
}

// A week: longer than any rendezvous waits.
constexpr int64_t kMaxJoinToFirstStepMs = int64_t{7} * 24 * 3600 * 1000;

// Files a dataset can skip: more than any listing holds.
constexpr int64_t kMaxSkippedSamples = int64_t{1} << 40;
// Class names a report may carry (ImageNet-21k has 21841).
constexpr int kMaxClassNames = 65536;
constexpr size_t kMaxClassNameBytes = size_t{1} << 20;

absl::Status CheckClassNames(const v1::ReportProgressRequest& r) {
  size_t bytes = 0;
  for (const std::string& n : r.class_names()) bytes += n.size();
  if (r.class_names_size() <= kMaxClassNames && bytes <= kMaxClassNameBytes) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "progress report: class_names must be at most ", kMaxClassNames,
      " names and ", kMaxClassNameBytes, " bytes, got ", r.class_names_size(),
      " names of ", bytes, " bytes"));
}

absl::Status CheckProgressNumbers(const v1::JobSpec& spec, int64_t train_size,
                                  const v1::ReportProgressRequest& r) {
  constexpr absl::string_view kWhat = "progress report";
  const int64_t max_steps = MaxJobSteps(spec, train_size, r.generation());
  for (const auto& [field, value, hi] :
       {std::make_tuple("epoch", r.epoch(), int64_t{spec.epochs()}),
        std::make_tuple("eval_epoch", r.eval_epoch(), int64_t{spec.epochs()}),
        std::make_tuple("step", r.step(), max_steps),
        std::make_tuple("total_steps", r.total_steps(), max_steps),
        std::make_tuple("join_to_first_step_ms", r.join_to_first_step_ms(),
                        kMaxJoinToFirstStepMs),
        std::make_tuple("skipped_samples", r.skipped_samples(),
                        kMaxSkippedSamples)}) {
    if (absl::Status s = InRange(kWhat, field, value, 0, hi); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = Finite("step_time_ms", r.step_time_ms(), true);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Finite("grad_norm", r.grad_norm(), true); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckClassNames(r); !s.ok()) return s;
  return Finite("final_train_loss", r.final_train_loss(), false);
}

}  // namespace ringleader
