#include "worker/train/checkpoint/commit_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader {

CommitQueue::Loop::Rules CommitQueue::UntilTheVerdict() {
  Loop::Rules rules;
  rules.stop_at_error = true;
  rules.error_of = [](const v1::CommitCheckpointRequest& commit,
                      const Answer& answer) {
    if (!answer.ok()) return answer.status();
    if (!answer->generation_ended()) return absl::OkStatus();
    // The coordinator has told every member (WatchGeneration, then
    // heartbeats), and each aborts its communicator: peers do not depend on
    // this rank's communicator going away, which an NCCL peer on the same
    // host would not notice.
    return absl::AbortedError(absl::StrCat(
        "generation ", commit.generation(), " of job ", commit.job_id(),
        " ended at checkpoint step ", commit.step(), " for a scale-up"));
  };
  return rules;
}

CommitQueue::CommitQueue(Send send, Committed on_committed)
    : loop_(
          [send = std::move(send), on_committed = std::move(on_committed)](
              const v1::CommitCheckpointRequest& commit,
              const std::atomic<bool>* cancel) {
            Answer answer = send(commit, cancel);
            if (answer.ok()) on_committed(commit, *answer);
            return answer;
          },
          UntilTheVerdict()) {}

CommitQueue::~CommitQueue() = default;

std::optional<CommitQueue::Answer> CommitQueue::Push(
    v1::CommitCheckpointRequest commit, absl::Duration wait) {
  return loop_.SubmitAndWait(std::move(commit), wait,
                             Loop::WaitIf::kFirstInLine);
}

absl::Status CommitQueue::Verdict() const { return loop_.first_error(); }

absl::Status CommitQueue::Drain(absl::Duration timeout) {
  if (!loop_.Flush(timeout)) {
    return absl::DeadlineExceededError(absl::StrCat(
        loop_.outstanding(), " checkpoint commit(s) not answered after ",
        absl::FormatDuration(timeout)));
  }
  return Verdict();
}

int64_t CommitQueue::pending() const { return loop_.outstanding(); }

}  // namespace ringleader
