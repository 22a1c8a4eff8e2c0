#ifndef RINGLEADER_TESTS_WORKER_CHILD_PROCESS_H_
#define RINGLEADER_TESTS_WORKER_CHILD_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace ringleader {

// Counts exits of several children, so a test can wait (bounded) for the
// first one without polling.
class ExitLatch {
 public:
  void Exited() {
    absl::MutexLock lock(&mu_);
    ++exited_;
  }
  // True once `n` children exited; false after `timeout`.
  bool WaitFor(int n, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]()
                       ABSL_SHARED_LOCKS_REQUIRED(mu_) { return exited_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
  }

 private:
  absl::Mutex mu_;
  int exited_ ABSL_GUARDED_BY(mu_) = 0;
};

// A child started with posix_spawn: fork without exec is unsafe in a process
// that runs gRPC. The child inherits stdout/stderr (its output lands in the
// test log); its stdin is a pipe held by the parent until CloseStdin(), so a
// child can block on stdin until told to go. A reaper thread waits for the
// child, so waiting with a timeout needs no polling. The destructor kills a
// child still running and reaps it. Thread-safe.
class ChildProcess {
 public:
  // `latch`, if given, must outlive the child.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(
      const std::string& path, const std::vector<std::string>& args,
      ExitLatch* latch = nullptr);
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  void CloseStdin();
  void Kill();
  // The wait(2) status once the child exited; nullopt after `timeout`.
  std::optional<int> WaitFor(absl::Duration timeout);
  // "exit 0", "exit 3", "signal 9", or "running".
  std::string Describe();

 private:
  ChildProcess(pid_t pid, int stdin_fd, ExitLatch* latch);

  const pid_t pid_;
  ExitLatch* const latch_;
  absl::Mutex mu_;
  int stdin_fd_ ABSL_GUARDED_BY(mu_);
  bool reaped_ ABSL_GUARDED_BY(mu_) = false;
  // Written by the reaper before `exited_` fires; read after it fired.
  int wait_status_ = 0;
  absl::Notification exited_;
  std::thread reaper_;
};

// Where Bazel put a data dependency of this test: $TEST_SRCDIR/ringleader/...
std::string RunfilePath(const std::string& workspace_relative);

}  // namespace ringleader

#endif  // RINGLEADER_TESTS_WORKER_CHILD_PROCESS_H_
