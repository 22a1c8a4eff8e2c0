#include "tests/worker/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace ringleader {

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::string& path, const std::vector<std::string>& args,
    ExitLatch* latch) {
  int fds[2];
  // Close-on-exec: the child gets only the read end, as its fd 0 (dup2
  // clears the flag on the copy).
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);

  std::vector<std::string> argv_storage = {path};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = 0;
  const int rc =
      posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[0]);
  if (rc != 0) {
    close(fds[1]);
    return absl::InternalError(
        absl::StrCat("posix_spawn ", path, ": ", std::strerror(rc)));
  }
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, fds[1], latch));
}

ChildProcess::ChildProcess(pid_t pid, int stdin_fd, ExitLatch* latch)
    : pid_(pid), latch_(latch), stdin_fd_(stdin_fd) {
  reaper_ = std::thread([this] {
    // Wait without reaping, then reap under the lock Kill() takes: the pid
    // stays ours (not reusable) for as long as Kill() may signal it.
    siginfo_t info;
    while (waitid(P_PID, pid_, &info, WEXITED | WNOWAIT) == -1 &&
           errno == EINTR) {
    }
    {
      absl::MutexLock lock(&mu_);
      int status = 0;
      while (waitpid(pid_, &status, 0) == -1 && errno == EINTR) {
      }
      wait_status_ = status;
      reaped_ = true;
    }
    exited_.Notify();
    if (latch_ != nullptr) latch_->Exited();
  });
}

ChildProcess::~ChildProcess() {
  if (!exited_.HasBeenNotified()) Kill();
  CloseStdin();
  reaper_.join();
}

void ChildProcess::CloseStdin() {
  absl::MutexLock lock(&mu_);
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

void ChildProcess::Kill() {
  absl::MutexLock lock(&mu_);
  if (!reaped_) kill(pid_, SIGKILL);
}

std::optional<int> ChildProcess::WaitFor(absl::Duration timeout) {
  if (!exited_.WaitForNotificationWithTimeout(timeout)) return std::nullopt;
  return wait_status_;
}

std::string ChildProcess::Describe() {
  if (!exited_.HasBeenNotified()) return "running";
  if (WIFEXITED(wait_status_)) {
    return absl::StrCat("exit ", WEXITSTATUS(wait_status_));
  }
  if (WIFSIGNALED(wait_status_)) {
    return absl::StrCat("signal ", WTERMSIG(wait_status_));
  }
  return absl::StrCat("status ", wait_status_);
}

std::string RunfilePath(const std::string& workspace_relative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return absl::StrCat(srcdir != nullptr ? srcdir : ".", "/ringleader/",
                      workspace_relative);
}

}  // namespace ringleader
