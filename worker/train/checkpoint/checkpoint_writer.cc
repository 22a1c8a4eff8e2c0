#include "worker/train/checkpoint/checkpoint_writer.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader {

SenderLoop<CheckpointWriter::Job>::Rules CheckpointWriter::OneAtATime() {
  SenderLoop<Job>::Rules rules;
  // Submit waits as long as the write takes: a synchronous write would
  // have blocked the training thread for all of it.
  rules.max_outstanding = 1;
  rules.stop_at_error = true;
  // A write handed over before the writer goes is written: its file may be
  // resumed from by a later generation once committed; it is small harm if
  // not.
  rules.send_queued_at_exit = true;
  return rules;
}

CheckpointWriter::CheckpointWriter()
    : loop_(
          [](const Job& job, const std::atomic<bool>*) {
            absl::Status s = job.write();
            if (s.ok() && job.then) job.then();
            return s;
          },
          OneAtATime()) {}

CheckpointWriter::~CheckpointWriter() = default;

absl::Status CheckpointWriter::Submit(Write write, Then then) {
  return loop_.Submit(Job{std::move(write), std::move(then)});
}

absl::Status CheckpointWriter::WaitIdle(absl::Duration timeout) {
  if (!loop_.Flush(timeout)) {
    return absl::DeadlineExceededError(
        absl::StrCat("a checkpoint is still being written after ",
                     absl::FormatDuration(timeout)));
  }
  return loop_.first_error();
}

absl::Status CheckpointWriter::status() const { return loop_.first_error(); }

}  // namespace ringleader
