#include "tests/partition/job_recorder.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "common/job_over.h"
#include "tests/integration/cluster.h"

namespace ringleader::testing {

JobRecorder::JobRecorder(v1::UserService::Stub* users,
                         const std::string& job_id, const std::string& path,
                         absl::Duration timeout)
    : start_(absl::Now()), out_(path, std::ios::app) {
  ctx_.set_deadline(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(timeout));
  thread_ = std::thread(
      [this, users, job_id, timeout] { Follow(users, job_id, timeout); });
}

JobRecorder::~JobRecorder() {
  ctx_.TryCancel();
  thread_.join();
}

void JobRecorder::Write(const std::string& line) {
  out_ << absl::StrFormat("%8.3f ", absl::ToDoubleSeconds(absl::Now() - start_))
       << line << "\n";
  out_.flush();
}

void JobRecorder::Follow(v1::UserService::Stub* users, std::string job_id,
                         absl::Duration timeout) {
  v1::WatchJobRequest req;
  req.set_job_id(job_id);
  auto stream = users->WatchJob(&ctx_, req);
  v1::Job job;
  // Bounded by the context's deadline (or the destructor's cancel).
  while (stream->Read(&job)) {
    const bool final = IsJobOver(job.state());
    const std::string change = absl::StrCat(
        v1::JobState_Name(job.state()), " generation ", job.generation(),
        " world ", job.world_size(), " restarts ", job.restarts(),
        job.message().empty() ? "" : ": ", job.message());
    Write(absl::StrCat(change, " (step ", job.progress().step(), "/",
                       job.progress().total_steps(), ")"));
    absl::MutexLock lock(&mu_);
    if (changes_.empty() || changes_.back().what != change) {
      changes_.push_back({absl::Now(), change});
    }
    last_ = job;
    ++snapshots_;
    if (final && !final_) {
      final_ = true;
      end_time_ = absl::Now();
    }
    if (final) break;
  }
  ctx_.TryCancel();
  const absl::Status s = FromGrpcStatus(stream->Finish(), "WatchJob");
  absl::MutexLock lock(&mu_);
  if (!final_) {
    ended_ = s.ok() ? absl::UnavailableError(absl::StrCat(
                          "WatchJob ended before job ", job_id, " did"))
                    : s;
    Write(absl::StrCat("watch ended: ", ended_.ToString(), " (after ",
                       absl::FormatDuration(timeout), " at most)"));
  }
}

absl::StatusOr<v1::Job> JobRecorder::WaitFor(
    std::function<bool(const v1::Job&)> until, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !ended_.ok() || final_ || (snapshots_ > 0 && until(last_));
  };
  if (mu_.AwaitWithTimeout(absl::Condition(&ready), timeout) &&
      (final_ || until(last_))) {
    return last_;
  }
  if (!ended_.ok()) return ended_;
  return absl::DeadlineExceededError(
      absl::StrCat("condition not reached in ", absl::FormatDuration(timeout),
                   "; last snapshot: ", v1::JobState_Name(last_.state()),
                   " step ", last_.progress().step(), " ", last_.message()));
}

absl::StatusOr<v1::Job> JobRecorder::WaitForEnd(absl::Duration timeout) {
  return WaitFor([](const v1::Job& j) { return IsJobOver(j.state()); }, timeout);
}

std::vector<JobRecorder::Change> JobRecorder::Changes() const {
  absl::MutexLock lock(&mu_);
  return changes_;
}

absl::Time JobRecorder::end_time() const {
  absl::MutexLock lock(&mu_);
  return end_time_;
}

}  // namespace ringleader::testing
