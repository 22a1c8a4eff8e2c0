#include "tests/integration/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace ringleader::testing {

absl::StatusOr<Process> Process::Start(const std::vector<std::string>& argv,
                                       const std::string& log_path,
                                       const std::vector<std::string>& env) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.push_back(*e);
  for (const std::string& e : env) env_strings.push_back(e);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid;
  int rc =
      posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("cannot start ", argv[0], ": ", std::strerror(rc)));
  }
  return Process(pid);
}

Process::Process(Process&& other) noexcept
    : pid_(other.pid_), exit_code_(other.exit_code_) {
  other.pid_ = -1;
}

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0 && !exit_code_) {
      Kill(SIGKILL);
      Wait(absl::Seconds(10));
    }
    pid_ = other.pid_;
    exit_code_ = other.exit_code_;
    other.pid_ = -1;
  }
  return *this;
}

Process::~Process() {
  if (pid_ > 0 && !exit_code_.has_value()) {
    Kill(SIGKILL);
    Wait(absl::Seconds(10));
  }
}

void Process::Kill(int signal) {
  if (pid_ > 0 && !exit_code_.has_value()) ::kill(pid_, signal);
}

std::optional<int> Process::Wait(absl::Duration timeout) {
  if (exit_code_.has_value() || pid_ <= 0) return exit_code_;
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ =
          WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exit_code_;
    }
    if (absl::Now() >= deadline) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(20));  // Polling a child's exit.
  }
}

std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir ? srcdir : ".", "/",
                      workspace ? workspace : "ringleader", "/", path);
}

std::string TempDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(tmp ? tmp : "/tmp", "/", name);
  std::string cmd = absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'");
  (void)std::system(cmd.c_str());
  return dir;
}

absl::StatusOr<std::string> WaitForFile(const std::string& path,
                                        absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    std::string content = ReadFile(path);
    if (!content.empty()) return content;
    absl::SleepFor(
        absl::Milliseconds(20));  // Polling a file another process writes.
  }
  return absl::DeadlineExceededError(absl::StrCat(path, " did not appear"));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ringleader::testing
