#ifndef RINGLEADER_TESTS_PARTITION_FOUR_HOSTS_H_
#define RINGLEADER_TESTS_PARTITION_FOUR_HOSTS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ringleader/v1/job.pb.h"
#include "tests/integration/cluster.h"
#include "tests/partition/exit_clock.h"
#include "tests/partition/job_recorder.h"
#include "tests/testing/netns.h"

namespace ringleader::testing {

inline constexpr int kWorkers = 3;

// A real coordinator and three real workers, each on a "host" of its own
// (tests/testing/netns.h: a network namespace with a private /dev/shm, so
// the workers' AUTO transport is Gloo over TCP), training one job while
// the test breaks the network between them. The coordinator runs with its
// shipped defaults (lease 3 s, heartbeat 1 s), the workers with
// --threads=1 and, if asked, --max_jobs=1. Every process's log, and the
// coordinator's view of the job (job_states.log), go to log_dir().
class FourHosts {
 public:
  // Where a fault is put.
  enum class Fault {
    kNone,
    kCoordinator,  // The coordinator's host, cut off from everyone.
    kWorker,       // One worker's host, cut off from everyone.
    kHeartbeats,   // What one worker sends the coordinator, nothing else.
  };

  // Makes the network, starts the coordinator, submits `spec` and starts
  // the workers. Logs go to `log_dir`.
  static absl::StatusOr<std::unique_ptr<FourHosts>> Start(
      const std::string& name, const v1::JobSpec& spec, bool max_jobs_one,
      const std::string& log_dir);
  // Stops the processes, then deletes the network.
  ~FourHosts();

  // The job's snapshot once it trains with all three workers at `step` or
  // later (or ended: the caller checks).
  absl::StatusOr<v1::Job> WaitUntilTraining(int64_t step,
                                            absl::Duration timeout);
  absl::StatusOr<v1::Job> WaitForEnd(absl::Duration timeout);
  // When the test first saw the job's final state.
  absl::Time end_time() const { return recorder_->end_time(); }
  // The coordinator's view of the job as it changed (job_recorder.h).
  std::vector<JobRecorder::Change> JobChanges() const {
    return recorder_->Changes();
  }

  // The worker (0..2) that took `rank` in `generation`, from its log.
  absl::StatusOr<int> WorkerWithRank(int64_t generation, int64_t rank) const;
  // Each worker's log, in worker order.
  std::vector<std::string> WorkerLogs() const;

  // Puts DROP rules in place (`worker` for kWorker and kHeartbeats).
  absl::Status Inject(Fault fault, int worker);
  // Removes them; how many frames they dropped.
  absl::StatusOr<int64_t> Heal() { return net_->Heal(); }

  Subprocess& worker(int i) { return *cluster_->workers()[i]; }
  // When worker `i` exited; nullopt while it runs (exit_clock.h).
  std::optional<absl::Time> ExitTime(
      int i, absl::Duration wait = absl::ZeroDuration()) const {
    return exits_->ExitTime(i, wait);
  }
  const std::string& log_dir() const { return log_dir_; }
  // The last `bytes` of every log (coordinator, workers, job states), for
  // a failure's message.
  std::string LogTails(size_t bytes) const;

 private:
  FourHosts() = default;

  std::string log_dir_;
  std::string job_id_;
  // Declared first: destroyed last, after every process on it.
  std::unique_ptr<VirtualNetwork> net_;
  std::unique_ptr<Cluster> cluster_;
  std::unique_ptr<JobRecorder> recorder_;
  std::unique_ptr<ExitClock> exits_;
};

std::string FaultName(FourHosts::Fault fault);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_PARTITION_FOUR_HOSTS_H_
