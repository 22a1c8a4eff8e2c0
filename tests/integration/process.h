#ifndef RINGLEADER_TESTS_INTEGRATION_PROCESS_H_
#define RINGLEADER_TESTS_INTEGRATION_PROCESS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ringleader::testing {

// A child process started with posix_spawn (gRPC is not fork-safe), its
// stdout and stderr sent to `log_path`. The destructor kills it (SIGKILL) if
// it still runs. Not thread-safe.
class Process {
 public:
  static absl::StatusOr<Process> Start(
      const std::vector<std::string>& argv, const std::string& log_path,
      const std::vector<std::string>& env = {});
  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  ~Process();

  pid_t pid() const { return pid_; }
  void Kill(int signal);
  // The exit code (128 + signal when killed), or nullopt if it still runs
  // after `timeout` (polled in small steps).
  std::optional<int> Wait(absl::Duration timeout);

 private:
  explicit Process(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// The path of a data dependency under the test's runfiles.
std::string Runfile(const std::string& workspace_relative_path);
// A fresh directory under TEST_TMPDIR.
std::string TempDir(const std::string& name);
// Polls until `path` is a non-empty file, for at most `timeout`.
absl::StatusOr<std::string> WaitForFile(const std::string& path,
                                        absl::Duration timeout);
std::string ReadFile(const std::string& path);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_INTEGRATION_PROCESS_H_
