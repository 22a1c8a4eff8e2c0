#include "tests/testing/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace ringleader::testing {
namespace {

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

int PidfdOpen(pid_t pid) {
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
}

int RemainingMs(absl::Time deadline) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(
      std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1 << 30));
}

// Waits for `pid` (through `pidfd`) until `deadline`: its exit code, or
// nullopt if it is still running.
std::optional<int> WaitUntil(pid_t pid, int pidfd, absl::Time deadline) {
  int status = 0;
  const pid_t r = waitpid(pid, &status, WNOHANG);
  if (r == pid) return DecodeWaitStatus(status);
  if (r < 0) return -1;  // Not our child any more: nothing to wait for.
  pollfd p{pidfd, POLLIN, 0};
  // Bounded: poll returns at the deadline; EINTR retries until then.
  while (poll(&p, 1, RemainingMs(deadline)) < 0 && errno == EINTR) {
  }
  if (waitpid(pid, &status, WNOHANG) == pid) return DecodeWaitStatus(status);
  return std::nullopt;
}

int KillAndReap(pid_t pid) {
  kill(pid, SIGKILL);
  int status = 0;
  // SIGKILL cannot be caught, so this returns promptly.
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return DecodeWaitStatus(status);
}

std::vector<std::string> BuildEnv(const ProcessOptions& options) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    env[std::string(*e, eq - *e)] = eq + 1;
  }
  for (const auto& [key, value] : options.env) {
    if (value.has_value()) {
      env[key] = *value;
    } else {
      env.erase(key);
    }
  }
  std::vector<std::string> out;
  for (const auto& [key, value] : env) out.push_back(key + "=" + value);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Spawns argv with stdin from /dev/null and stdout/stderr on `out_fd` and
// `err_fd` (-1: open `out_path`/`err_path`, or /dev/null when empty).
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv,
                            const ProcessOptions& options, int out_fd,
                            int err_fd) {
  if (argv.empty()) return absl::InvalidArgumentError("empty argv");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  auto route = [&actions](int target, int fd, const std::string& path) {
    if (fd >= 0) {
      posix_spawn_file_actions_adddup2(&actions, fd, target);
    } else {
      posix_spawn_file_actions_addopen(
          &actions, target, path.empty() ? "/dev/null" : path.c_str(),
          O_WRONLY | O_CREAT | O_TRUNC, 0644);
    }
  };
  route(1, out_fd, options.stdout_path);
  route(2, err_fd, options.stderr_path);
  std::vector<std::string> args = argv;
  std::vector<std::string> env = BuildEnv(options);
  std::vector<char*> c_args = CStrings(args);
  std::vector<char*> c_env = CStrings(env);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr,
                             c_args.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("cannot start ", argv[0], ": ", std::strerror(rc)));
  }
  return pid;
}

}  // namespace

absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         absl::Duration timeout,
                                         const ProcessOptions& options) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return absl::InternalError("pipe");
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return absl::InternalError("pipe");
  }
  absl::StatusOr<pid_t> pid = Spawn(argv, options, out_pipe[1], err_pipe[1]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (!pid.ok()) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return pid.status();
  }
  const absl::Time deadline = absl::Now() + timeout;
  ProcessResult result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  // Bounded by the deadline: poll never waits past it.
  while (open_fds > 0 && absl::Now() < deadline) {
    const int n = poll(fds, 2, RemainingMs(deadline));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP)) == 0) {
        continue;
      }
      char buf[4096];
      const ssize_t got = read(fds[i].fd, buf, sizeof(buf));
      if (got > 0) {
        sinks[i]->append(buf, got);
      } else if (got == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  const int pidfd = PidfdOpen(*pid);
  std::optional<int> code;
  if (pidfd >= 0) {
    code = WaitUntil(*pid, pidfd, deadline);
    close(pidfd);
  }
  if (!code.has_value()) {
    result.timed_out = true;
    code = KillAndReap(*pid);
  }
  result.exit_code = *code;
  return result;
}

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(
    const std::vector<std::string>& argv, const ProcessOptions& options) {
  absl::StatusOr<pid_t> pid = Spawn(argv, options, -1, -1);
  if (!pid.ok()) return pid.status();
  const int pidfd = PidfdOpen(*pid);
  return std::unique_ptr<Subprocess>(new Subprocess(*pid, pidfd));
}

Subprocess::~Subprocess() {
  Stop();
  if (pidfd_ >= 0) close(pidfd_);
}

bool Subprocess::Running() {
  if (exit_code_.has_value()) return false;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  exit_code_ = r == pid_ ? DecodeWaitStatus(status) : -1;
  return false;
}

std::optional<int> Subprocess::Wait(absl::Duration timeout) {
  if (!Running()) return exit_code_;
  if (pidfd_ < 0) return std::nullopt;  // Cannot wait without sleeping.
  exit_code_ = WaitUntil(pid_, pidfd_, absl::Now() + timeout);
  return exit_code_;
}

void Subprocess::Kill(int signal) {
  if (Running()) kill(pid_, signal);
}

int Subprocess::Stop(absl::Duration grace) {
  if (!Running()) return *exit_code_;
  kill(pid_, SIGTERM);
  if (std::optional<int> code = Wait(grace); code.has_value()) return *code;
  exit_code_ = KillAndReap(pid_);
  return *exit_code_;
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

absl::StatusOr<std::string> WaitForFileContaining(const std::string& path,
                                                  const std::string& needle,
                                                  absl::Duration timeout,
                                                  Subprocess* process) {
  const absl::Time deadline = absl::Now() + timeout;
  // Bounded by the deadline.
  while (true) {
    std::string text = ReadFileOrEmpty(path);
    if (!text.empty() && text.find(needle) != std::string::npos) return text;
    if (process != nullptr && !process->Running()) {
      return absl::FailedPreconditionError(
          absl::StrCat("process ", process->pid(), " exited (code ",
                       process->Wait(absl::ZeroDuration()).value_or(-1),
                       ") before ", path, " had \"", needle, "\""));
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(path, " did not get \"", needle, "\" within ",
                       absl::FormatDuration(timeout), "; it holds: ", text));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

absl::StatusOr<std::string> WaitForFile(const std::string& path,
                                        absl::Duration timeout,
                                        Subprocess* process) {
  return WaitForFileContaining(path, "", timeout, process);
}

absl::StatusOr<int> WaitForPortFile(const std::string& path,
                                    absl::Duration timeout,
                                    Subprocess* process) {
  absl::StatusOr<std::string> text = WaitForFile(path, timeout, process);
  if (!text.ok()) return text.status();
  int port = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &port) ||
      port <= 0 || port > 65535) {
    return absl::DataLossError(
        absl::StrCat(path, " does not hold a port: \"", *text, "\""));
  }
  return port;
}

std::string RunfilePath(const std::string& workspace_relative) {
  const char* root = std::getenv("TEST_SRCDIR");
  if (root == nullptr) root = std::getenv("RUNFILES_DIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(root != nullptr ? root : ".", "/",
                      workspace != nullptr ? workspace : "ringleader", "/",
                      workspace_relative);
}

std::string TestTempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

}  // namespace ringleader::testing
