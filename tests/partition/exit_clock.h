#ifndef RINGLEADER_TESTS_PARTITION_EXIT_CLOCK_H_
#define RINGLEADER_TESTS_PARTITION_EXIT_CLOCK_H_

#include <sys/types.h>

#include <optional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ringleader::testing {

// When each of a set of child processes exited, as seen by a thread that
// waits on their pidfds (it never reaps them: their Subprocess still does,
// and still gets the exit code). What a test needs to tell a worker that
// exited after its job succeeded from one that exited before.
class ExitClock {
 public:
  // Watches `pids` (children of this process) until destroyed.
  explicit ExitClock(const std::vector<pid_t>& pids);
  ~ExitClock();
  ExitClock(const ExitClock&) = delete;
  ExitClock& operator=(const ExitClock&) = delete;

  // When pids[i] exited, waiting up to `wait` for the watching thread to
  // see it (it sees an exit a moment after a waitpid does); nullopt while
  // it runs, or if it could not be watched (pidfd_open failed).
  std::optional<absl::Time> ExitTime(
      size_t i, absl::Duration wait = absl::ZeroDuration()) const;

 private:
  void Watch();

  std::vector<int> pidfds_;
  int stop_fd_ = -1;  // An eventfd: written to stop the thread.
  mutable absl::Mutex mu_;
  std::vector<std::optional<absl::Time>> exits_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_PARTITION_EXIT_CLOCK_H_
