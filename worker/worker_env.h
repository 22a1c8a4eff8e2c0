#ifndef RINGLEADER_WORKER_WORKER_ENV_H_
#define RINGLEADER_WORKER_WORKER_ENV_H_

// Where a worker finds its coordinator, from its flag and environment.
//
// In order: --coordinator; $RINGLEADER_COORDINATOR (systemd's EnvironmentFile,
// a Kubernetes env var, deploy/slurm's batch script); the Kubeflow
// PyTorchJob / torchrun env:// variables $MASTER_ADDR:$MASTER_PORT (the
// master replica runs the coordinator); under Slurm, the first node of
// $SLURM_JOB_NODELIST (where deploy/slurm runs it) at
// $RINGLEADER_COORDINATOR_PORT (default 7070); else 127.0.0.1:7070. $RANK and
// $WORLD_SIZE, when given, are checked (both or neither, 0 <= RANK <
// WORLD_SIZE) and reported, as are Slurm's $SLURM_PROCID and $SLURM_NTASKS:
// ranks are the coordinator's to assign (rendezvous is elastic), so they are
// a hint for logs, not a constraint. The process's GPU is its launcher's
// local rank: $LOCAL_RANK (torchrun), else $SLURM_LOCALID.

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace ringleader {

struct WorkerEnv {
  std::string coordinator;  // HOST:PORT
  // What it came from: "--coordinator", "RINGLEADER_COORDINATOR",
  // "MASTER_ADDR:MASTER_PORT" or "default".
  std::string coordinator_source;
  std::optional<int> rank;        // $RANK
  std::optional<int> world_size;  // $WORLD_SIZE
  // Under Slurm (srun sets these): the Slurm job, this task's rank among
  // the step's $SLURM_NTASKS, and its rank on its node.
  std::optional<std::string> slurm_job_id;
  // $SLURM_STEP_ID: the step `scancel JOBID.STEP` names (the batch script
  // runs each worker as a step of its own).
  std::optional<int> slurm_step_id;
  std::optional<int> slurm_procid;
  std::optional<int> slurm_ntasks;
  // The GPU index its launcher gives this process: $LOCAL_RANK, else
  // $SLURM_LOCALID.
  std::optional<int> local_rank;
};

// An environment lookup: the variable's value, or nullopt if unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// The process environment (std::getenv).
EnvLookup ProcessEnvironment();

// INVALID_ARGUMENT naming the variable when one that is used is malformed
// (MASTER_PORT not in 1..65535, MASTER_ADDR without MASTER_PORT, RANK
// without WORLD_SIZE, a RANK outside the world).
absl::StatusOr<WorkerEnv> ResolveWorkerEnv(const std::string& coordinator_flag,
                                           const EnvLookup& env);

// One line for the log: "coordinator HOST:PORT (from ...); PyTorchJob rank R
// of W; Slurm job J task P of N".
std::string DescribeWorkerEnv(const WorkerEnv& env);

// The --device to train on: "cuda" alone names the launcher's local rank
// (cuda:$LOCAL_RANK or cuda:$SLURM_LOCALID; INVALID_ARGUMENT without one);
// anything else as given.
absl::StatusOr<std::string> ResolveDevice(const std::string& device_flag,
                                          const WorkerEnv& env);

// The first host of a Slurm host list ("gpu[01-04,07],cpu3" -> "gpu01");
// INVALID_ARGUMENT for an empty or malformed one.
absl::StatusOr<std::string> FirstSlurmHost(const std::string& nodelist);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_WORKER_ENV_H_
