#ifndef RINGLEADER_TESTS_SLURM_SLURM_CLUSTER_H_
#define RINGLEADER_TESTS_SLURM_SLURM_CLUSTER_H_

// A real Slurm cluster of one node on this machine, from Debian's slurm-wlm
// and munge (scripts/setup.sh installs them): munged, as user munge, on a
// private key and socket; slurmctld and slurmd on a private slurm.conf
// (free ports; state, spool, pid and log files under a fresh directory in
// /tmp, short enough for munge's socket path and readable by user munge).
// The destructor stops the daemons and removes the directory. The client
// commands (sbatch, squeue, scancel, scontrol) run with $SLURM_CONF set.
//
// Needs root (slurmd runs job steps as their user, and munged must run as
// munge): Supported() says why not otherwise. A test using it is tagged
// "no-sandbox" (Bazel's sandbox hides the daemons' files from each other).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/testing/process.h"

namespace ringleader::testing {

class SlurmCluster {
 public:
  struct Options {
    // CPUs the node offers (the machine's own count does not matter): one
    // per task.
    int cpus = 4;
    // Seconds between a job's SIGTERM and its SIGKILL (preemption, requeue,
    // scancel): above the workers' --preempt_grace.
    int kill_wait_s = 35;
  };

  // OK where a cluster can start here; else why not (not root, a program
  // or the munge user missing).
  static absl::Status Supported();
  static absl::StatusOr<std::unique_ptr<SlurmCluster>> Start(
      const Options& options);
  ~SlurmCluster();

  // Runs a client command (`{"sbatch", ...}`; looked up on PATH) with this
  // cluster's $SLURM_CONF and `env` (NAME=VALUE).
  absl::StatusOr<ProcessResult> Client(
      std::vector<std::string> argv, absl::Duration timeout = absl::Seconds(60),
      const std::vector<std::string>& env = {});
  // `sbatch --parsable ARGS...`: the job id.
  absl::StatusOr<std::string> Submit(const std::vector<std::string>& args,
                                     const std::vector<std::string>& env = {});
  // The job's state as scontrol shows it (PENDING, RUNNING, COMPLETED,
  // FAILED, CANCELLED, ...), "" when the controller no longer knows it.
  absl::StatusOr<std::string> JobState(const std::string& job_id);
  // Waits (polling every 200 ms) until the job's state is one of `states`;
  // the state reached, DEADLINE_EXCEEDED with the last one seen otherwise.
  absl::StatusOr<std::string> WaitForJobState(
      const std::string& job_id, const std::vector<std::string>& states,
      absl::Duration timeout);
  // The ids of the job's running steps (scontrol's "JOB.STEP"), batch and
  // extern steps left out.
  absl::StatusOr<std::vector<std::string>> RunningSteps(
      const std::string& job_id);

  const std::string& dir() const { return dir_; }
  const std::string& conf() const { return conf_; }
  // The daemons' logs, for a failure's message.
  std::string Logs() const;

 private:
  SlurmCluster() = default;
  absl::Status StartMunge();
  absl::Status WriteConf(const Options& options);
  absl::Status StartSlurm();
  void StopAll();

  std::string dir_;
  std::string conf_;
  std::vector<std::string> pid_files_;
};

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_SLURM_SLURM_CLUSTER_H_
