#ifndef RINGLEADER_TESTS_CLI_COORDINATOR_PROCESS_H_
#define RINGLEADER_TESTS_CLI_COORDINATOR_PROCESS_H_

// The real ringleader-coordinator binary as a child of a test: a fresh
// state file and a free port on 127.0.0.1, ready once it wrote its port
// file. Killed when destroyed. Thread-compatible.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/testing/process.h"

namespace ringleader::testing {

class CoordinatorProcess {
 public:
  struct Options {
    // The binary; empty: the //coordinator:ringleader-coordinator data
    // dependency of the test.
    std::string binary;
    // Appended to --listen, --state and --port_file, e.g. "--lease_ms=60000".
    std::vector<std::string> extra_flags;
    // How long it may take to start serving.
    absl::Duration start_timeout = absl::Seconds(10);
  };

  static absl::StatusOr<std::unique_ptr<CoordinatorProcess>> Start(
      const Options& options);

  int port() const { return port_; }
  // "127.0.0.1:PORT".
  std::string address() const;
  // Its directory (state, port file, log) and its stderr log.
  const std::string& dir() const { return dir_; }
  std::string log_path() const { return dir_ + "/coordinator.log"; }
  Subprocess& process() { return *process_; }

 private:
  CoordinatorProcess(std::string dir, std::unique_ptr<Subprocess> process,
                     int port)
      : dir_(std::move(dir)), process_(std::move(process)), port_(port) {}

  std::string dir_;
  std::unique_ptr<Subprocess> process_;
  int port_;
};

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_CLI_COORDINATOR_PROCESS_H_
