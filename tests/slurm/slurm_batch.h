#ifndef RINGLEADER_TESTS_SLURM_SLURM_BATCH_H_
#define RINGLEADER_TESTS_SLURM_SLURM_BATCH_H_

// Jobs run through deploy/slurm/ringleader.sbatch with the commands
// deploy/README.md's Slurm block shows, read from that file
// (documented_commands.h): what tests/slurm and bench/recovery's Slurm
// requeue run. The job is an MLP on a Fashion-MNIST subset; its output is
// where the script puts it by default ($SCRATCH: the given directory).

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/slurm/slurm_cluster.h"

namespace ringleader::testing {

// What one run of the batch script printed, and its outcome.
struct BatchRun {
  std::string slurm_job;
  std::string slurm_state;
  std::string output;
  std::optional<double> accuracy;  // "accuracy 85.02%" from ringctl watch.
  bool succeeded = false;          // "ringleader: job ... is ..._SUCCEEDED".
};

// The last "accuracy N%" ringctl watch printed (not top5_accuracy).
std::optional<double> LastAccuracy(const std::string& out);
// The step ringctl watch last showed ("... 123/564 loss ..."), 0 if none.
int64_t LastStep(const std::string& out);
// Every number the first capture group of `re` matches in `out`.
std::vector<int64_t> AllNumbers(const std::string& out, const std::regex& re);

class DocumentedSlurm {
 public:
  // OK where the job's data can be written (Fashion-MNIST installed).
  static absl::Status DataReady();

  // `dir` holds the job file, its checkpoints and (as $SCRATCH) the
  // script's output and state.
  DocumentedSlurm(SlurmCluster* slurm, std::string dir)
      : slurm_(slurm), dir_(std::move(dir)) {}

  // The documented CPU `sbatch -n ...` with `tasks` tasks, on a job of 3
  // epochs (about 560 steps at world 2), between 2 and `max_workers`
  // workers: the Slurm job id.
  absl::StatusOr<std::string> Submit(int tasks, int max_workers);
  // Runs the documented command that starts with `prefix`, JOBID (and
  // JOBID.3) naming `job` (and `step`).
  absl::Status Run(const std::string& prefix, const std::string& job,
                   const std::string& step = "");
  // The job's output, where the documented `tail -f` reads it.
  std::string OutputOf(const std::string& job);
  // Waits (at most 6 minutes) for the Slurm job to end.
  BatchRun Finish(const std::string& job);
  // The output's tail and the daemons' logs, for a failure's message.
  std::string Tail(const BatchRun& r);

  const std::string& dir() const { return dir_; }

 private:
  std::string JobFile(int max_workers);

  SlurmCluster* slurm_;
  std::string dir_;
};

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_SLURM_SLURM_BATCH_H_
