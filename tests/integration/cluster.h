#ifndef RINGLEADER_TESTS_INTEGRATION_CLUSTER_H_
#define RINGLEADER_TESTS_INTEGRATION_CLUSTER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "tests/testing/process.h"

namespace ringleader::testing {

// A fresh, empty directory `name` under the test's temporary directory.
std::string FreshDir(const std::string& name);

// Where a Cluster's processes run and how the test reaches them; the
// defaults are all on this host's loopback.
struct ClusterOptions {
  std::vector<std::string> coordinator_flags;
  // The address the coordinator listens on and workers reach it at.
  std::string host = "127.0.0.1";
  // Runs the coordinator under this command (e.g. on another "host": see
  // tests/testing/netns.h); empty: directly.
  std::vector<std::string> coordinator_prefix;
  // Where the processes' logs go (coordinator.log, worker<N>.log); empty:
  // the cluster's directory.
  std::string log_dir;
  // The test's channel to the coordinator listening on `port`; unset: an
  // insecure TCP channel to host:port.
  std::function<absl::StatusOr<std::shared_ptr<grpc::Channel>>(int port)>
      connect;
};

// A real coordinator process (and workers) on 127.0.0.1 with a free port,
// its state in a temporary directory: what integration tests train on.
// Not thread-safe.
class Cluster {
 public:
  static absl::StatusOr<std::unique_ptr<Cluster>> Start(
      const std::string& name, std::vector<std::string> coordinator_flags = {});
  static absl::StatusOr<std::unique_ptr<Cluster>> Start(const std::string& name,
                                                        ClusterOptions options);

  // Kills the coordinator with `signal` and waits for it to exit.
  void StopCoordinator(int signal);
  // Sends the coordinator `signal` and returns (SIGSTOP, SIGCONT: an outage
  // that keeps its sockets open, so calls time out rather than fail fast).
  void SignalCoordinator(int signal);
  // Starts it again on the same state file (and a new free port unless
  // `same_port`).
  absl::Status StartCoordinator(bool same_port = false);
  // A worker with `flags` (after --coordinator), run under `command_prefix`
  // when one is given; its log is log_dir()/worker<N>.log.
  absl::StatusOr<Subprocess*> StartWorker(
      std::vector<std::string> flags = {},
      const std::vector<std::string>& command_prefix = {});
  // Starts `n` workers with the same flags.
  absl::Status StartWorkers(int n, const std::vector<std::string>& flags);

  std::string target() const {
    return options_.host + ":" + std::to_string(port_);
  }
  const std::string& dir() const { return dir_; }
  // The running coordinator process (null while stopped).
  Subprocess* coordinator() { return coordinator_.get(); }
  const std::string& log_dir() const { return options_.log_dir; }
  v1::UserService::Stub& users() { return *users_; }
  std::vector<std::unique_ptr<Subprocess>>& workers() { return workers_; }
  // What each worker started here has logged so far, in start order (its
  // log_dir()/worker<N>.log; empty where nothing was written yet).
  std::vector<std::string> WorkerLogs() const;

  absl::StatusOr<std::string> Submit(const v1::JobSpec& spec);
  absl::StatusOr<v1::Job> Get(const std::string& job_id);
  // Follows WatchJob until `until` holds for a snapshot (or the job is
  // final) and returns that snapshot; DEADLINE_EXCEEDED after `timeout`.
  absl::StatusOr<v1::Job> WaitUntil(const std::string& job_id,
                                    std::function<bool(const v1::Job&)> until,
                                    absl::Duration timeout);
  // Follows WatchJob until the job is final, or fails after `timeout`.
  absl::StatusOr<v1::Job> WaitForEnd(const std::string& job_id,
                                     absl::Duration timeout);

 private:
  Cluster() = default;
  absl::Status Connect();

  std::string dir_;
  ClusterOptions options_;
  int port_ = 0;
  int coordinator_starts_ = 0;
  std::unique_ptr<Subprocess> coordinator_;
  std::vector<std::unique_ptr<Subprocess>> workers_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::UserService::Stub> users_;
};

// Whether `job` is running at `world` ranks and has reached `step`: the
// moment the failure tests strike.
bool RunningAt(const v1::Job& job, int world, int64_t step);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_INTEGRATION_CLUSTER_H_
