#ifndef RINGLEADER_TESTS_PARTITION_JOB_RECORDER_H_
#define RINGLEADER_TESTS_PARTITION_JOB_RECORDER_H_

#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "ringleader/v1/user_service.grpc.pb.h"

namespace ringleader::testing {

// Follows one job's WatchJob stream on a thread of its own for as long as
// the job runs (or `timeout`), writing one line per snapshot to `path`
// (seconds since the recorder started, state, generation, world size,
// restarts, step, message): the coordinator's view of a fault, for the test
// and for whoever reads its logs. Tests wait on its latest snapshot.
class JobRecorder {
 public:
  JobRecorder(v1::UserService::Stub* users, const std::string& job_id,
              const std::string& path, absl::Duration timeout);
  // Cancels the stream and joins the thread.
  ~JobRecorder();
  JobRecorder(const JobRecorder&) = delete;
  JobRecorder& operator=(const JobRecorder&) = delete;

  // The latest snapshot once `until` holds for it, or the final one;
  // DeadlineExceeded after `timeout`, or the stream's error if it ended before
  // the job did.
  absl::StatusOr<v1::Job> WaitFor(std::function<bool(const v1::Job&)> until,
                                  absl::Duration timeout);
  // The job's final snapshot (SUCCEEDED, FAILED or CANCELLED).
  absl::StatusOr<v1::Job> WaitForEnd(absl::Duration timeout);

  // A line per change of state, generation, world size, restarts or
  // message, with when the recorder saw it: the coordinator's story.
  struct Change {
    absl::Time time;
    std::string what;
  };
  std::vector<Change> Changes() const;

  // When the recorder first saw the job in its final state.
  absl::Time end_time() const;
  absl::Time start_time() const { return start_; }

 private:
  void Follow(v1::UserService::Stub* users, std::string job_id,
              absl::Duration timeout);
  void Write(const std::string& line);

  const absl::Time start_;
  std::ofstream out_;
  grpc::ClientContext ctx_;
  mutable absl::Mutex mu_;
  v1::Job last_ ABSL_GUARDED_BY(mu_);
  std::vector<Change> changes_ ABSL_GUARDED_BY(mu_);
  int64_t snapshots_ ABSL_GUARDED_BY(mu_) = 0;
  bool final_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time end_time_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  // Set when the stream ended before the job did.
  absl::Status ended_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_PARTITION_JOB_RECORDER_H_
