#ifndef RINGLEADER_TESTS_TESTING_PROCESS_H_
#define RINGLEADER_TESTS_TESTING_PROCESS_H_

// Child processes for integration tests: run a binary to completion with its
// output captured, or keep a daemon running in the background with its
// output in files, and wait (bounded) for a file it writes. Nothing here
// sleeps except the short polls of WaitForFile*; waits on a child use a
// pidfd, so every wait ends at its deadline. Linux only.
//
// Thread-compatible; a Subprocess belongs to the thread that started it.

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ringleader::testing {

struct ProcessOptions {
  // Changes to the inherited environment: a value sets the variable,
  // nullopt removes it.
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
  // Where a background Subprocess's stdout/stderr go; empty: /dev/null.
  std::string stdout_path;
  std::string stderr_path;
};

struct ProcessResult {
  // The exit status, or 128 + signal when killed by a signal.
  int exit_code = -1;
  std::string out;
  std::string err;
  bool timed_out = false;  // Killed because it ran past the timeout.
};

// Runs argv[0] (a path) with arguments argv[1..] until it exits or `timeout`
// passes (then SIGKILL, timed_out set). stdin is /dev/null. Fails only when
// the process cannot be started.
absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         absl::Duration timeout,
                                         const ProcessOptions& options = {});

// A background child. The destructor kills it (SIGTERM, then SIGKILL after a
// grace period) and reaps it.
class Subprocess {
 public:
  static absl::StatusOr<std::unique_ptr<Subprocess>> Start(
      const std::vector<std::string>& argv, const ProcessOptions& options = {});
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }

  // Whether it is still running (reaps it if it has exited).
  bool Running();

  // Waits up to `timeout` for it to exit; its exit code (as ProcessResult's)
  // or nullopt if it is still running.
  std::optional<int> Wait(absl::Duration timeout);

  // SIGTERM, up to `grace` to exit, then SIGKILL. The exit code.
  int Stop(absl::Duration grace = absl::Seconds(5));

  // Sends `signal` (SIGKILL for a crash test) if it still runs.
  void Kill(int signal);

 private:
  Subprocess(pid_t pid, int pidfd) : pid_(pid), pidfd_(pidfd) {}

  pid_t pid_;
  int pidfd_;  // -1 where the kernel has no pidfd_open.
  std::optional<int> exit_code_;
};

// Polls (every 10 ms) until `path` exists and is not empty, then returns its
// contents; DeadlineExceeded after `timeout`. If `process` is given and exits
// first, FailedPrecondition at once.
absl::StatusOr<std::string> WaitForFile(const std::string& path,
                                        absl::Duration timeout,
                                        Subprocess* process = nullptr);

// As WaitForFile, until the file's contents contain `needle`.
absl::StatusOr<std::string> WaitForFileContaining(
    const std::string& path, const std::string& needle, absl::Duration timeout,
    Subprocess* process = nullptr);

// The port a daemon wrote (one decimal number, as --port_file=... does).
absl::StatusOr<int> WaitForPortFile(const std::string& path,
                                    absl::Duration timeout,
                                    Subprocess* process = nullptr);

// The whole file, or "" if it cannot be read.
std::string ReadFileOrEmpty(const std::string& path);

// The path of a data dependency of the running test, from the workspace
// root: RunfilePath("cli/ringctl"). Uses $TEST_SRCDIR (or $RUNFILES_DIR).
std::string RunfilePath(const std::string& workspace_relative);

// A directory for the test's files: $TEST_TMPDIR, else /tmp.
std::string TestTempDir();

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_PROCESS_H_
