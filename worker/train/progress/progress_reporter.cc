#include "worker/train/progress/progress_reporter.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader {
SenderLoop<ProgressReporter::Entry>::Rules ProgressReporter::LatestWins() {
  SenderLoop<Entry>::Rules rules;
  rules.replaces = [](const Entry& queued, const Entry& incoming) {
    return !queued.kept && !incoming.kept;
  };
  return rules;
}

ProgressReporter::ProgressReporter(Send send)
    : loop_(
          [send = std::move(send)](const Entry& e,
                                   const std::atomic<bool>* cancel) {
            return send(e.report, cancel);
          },
          LatestWins()) {}

ProgressReporter::~ProgressReporter() = default;

bool ProgressReporter::Keeps(const v1::ReportProgressRequest& report) {
  int64_t seen = eval_epoch_.load();
  while (report.eval_epoch() > seen) {
    if (eval_epoch_.compare_exchange_weak(seen, report.eval_epoch())) {
      return true;  // A new evaluation.
    }
  }
  return report.finished();
}

void ProgressReporter::Submit(v1::ReportProgressRequest report) {
  const bool kept = Keeps(report);
  loop_.Submit(Entry{std::move(report), kept}).IgnoreError();  // Never full.
}

absl::Status ProgressReporter::Deliver(v1::ReportProgressRequest report,
                                       absl::Duration timeout) {
  const int64_t step = report.step();
  Keeps(report);
  std::optional<absl::Status> outcome =
      loop_.SubmitAndWait(Entry{std::move(report), /*kept=*/true}, timeout);
  if (!outcome.has_value()) {
    return absl::DeadlineExceededError(
        absl::StrCat("progress report of step ", step, " not delivered within ",
                     absl::FormatDuration(timeout)));
  }
  return *std::move(outcome);
}

absl::Status ProgressReporter::Flush(absl::Duration timeout) {
  absl::Status error;
  if (!loop_.Flush(timeout, &error)) {
    return absl::DeadlineExceededError(
        absl::StrCat("progress reports not delivered within ",
                     absl::FormatDuration(timeout)));
  }
  return error;
}

int64_t ProgressReporter::sent() const { return loop_.sent(); }

}  // namespace ringleader
