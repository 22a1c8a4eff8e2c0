#ifndef RINGLEADER_WORKER_WORKER_ENV_H_
#define RINGLEADER_WORKER_WORKER_ENV_H_

// Where a worker finds its coordinator, from its flag and environment.
//
// In order: --coordinator; $RINGLEADER_COORDINATOR (systemd's EnvironmentFile,
// a Kubernetes env var); the Kubeflow PyTorchJob / torchrun env://
// variables $MASTER_ADDR:$MASTER_PORT (the master replica runs the
// coordinator); else 127.0.0.1:7070. $RANK and $WORLD_SIZE, when given, are
// checked (both or neither, 0 <= RANK < WORLD_SIZE) and reported: ranks are
// the coordinator's to assign (rendezvous is elastic), so they are a hint
// for logs, not a constraint.

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
// of W".
std::string DescribeWorkerEnv(const WorkerEnv& env);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_WORKER_ENV_H_
