#include "tests/slurm/slurm_cluster.h"

#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace ringleader::testing {
namespace {

constexpr const char* kPrograms[] = {
    "/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd",
    "/usr/bin/sbatch",  "/usr/bin/scontrol",   "/usr/bin/scancel",
    "/usr/bin/squeue",  "/usr/bin/sinfo",      "/usr/bin/srun"};
constexpr absl::Duration kPoll = absl::Milliseconds(200);

absl::StatusOr<int> FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket() failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof(a);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), len) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  ::close(fd);
  if (!ok) return absl::InternalError("cannot pick a free port");
  return ntohs(a.sin_port);
}

// As `hostname -s`: what slurmd calls its node.
std::string ShortHostname() {
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  const std::string name = host;
  return name.substr(0, name.find('.'));
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::trunc);
  f << text;
  f.close();
  if (!f) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status RunOk(const std::vector<std::string>& argv,
                   absl::Duration timeout = absl::Seconds(30)) {
  absl::StatusOr<ProcessResult> r = RunProcess(argv, timeout);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat(absl::StrJoin(argv, " "), ": exit ",
                                            r->exit_code, ": ", r->err,
                                            r->out));
  }
  return absl::OkStatus();
}

// The pid a daemon wrote, 0 if none.
pid_t PidIn(const std::string& path) {
  int pid = 0;
  std::string text = ReadFileOrEmpty(path);
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &pid)) return 0;
  return pid;
}

// SIGTERM, then SIGKILL if it is still there after `grace`.
void StopPid(pid_t pid, absl::Duration grace) {
  if (pid <= 0 || ::kill(pid, SIGTERM) != 0) return;
  const absl::Time give_up = absl::Now() + grace;
  while (absl::Now() < give_up && ::kill(pid, 0) == 0) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  ::kill(pid, SIGKILL);
}

}  // namespace

absl::Status SlurmCluster::Supported() {
  if (::geteuid() != 0) {
    return absl::FailedPreconditionError(
        "needs root (slurmd runs job steps as their user; munged runs as "
        "user munge)");
  }
  for (const char* p : kPrograms) {
    if (::access(p, X_OK) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          p,
          " is missing (apt-get install slurm-wlm munge; scripts/setup.sh "
          "does)"));
    }
  }
  if (::getpwnam("munge") == nullptr) {
    return absl::FailedPreconditionError("there is no user munge");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SlurmCluster>> SlurmCluster::Start(
    const Options& options) {
  if (absl::Status s = Supported(); !s.ok()) return s;
  std::unique_ptr<SlurmCluster> c(new SlurmCluster());
  char dir[] = "/tmp/rl-slurm-XXXXXX";
  if (::mkdtemp(dir) == nullptr) return absl::InternalError("mkdtemp failed");
  c->dir_ = dir;
  ::chmod(dir, 0755);  // User munge reads its key below it.
  for (const char* sub : {"state", "spool", "munge"}) {
    std::filesystem::create_directories(c->dir_ + "/" + sub);
  }
  if (absl::Status s = c->StartMunge(); !s.ok()) return s;
  if (absl::Status s = c->WriteConf(options); !s.ok()) return s;
  if (absl::Status s = c->StartSlurm(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(s.message(), c->Logs()));
  }
  return c;
}

absl::Status SlurmCluster::StartMunge() {
  const std::string m = dir_ + "/munge";
  const passwd* munge = ::getpwnam("munge");
  // A key of its own: 1024 random bytes, the munge user's, mode 400.
  std::random_device rd;
  std::string key(1024, '\0');
  for (char& ch : key) ch = static_cast<char>(rd());
  if (absl::Status s = WriteFile(m + "/munge.key", key); !s.ok()) return s;
  if (::chown(m.c_str(), munge->pw_uid, munge->pw_gid) != 0 ||
      ::chown((m + "/munge.key").c_str(), munge->pw_uid, munge->pw_gid) != 0 ||
      ::chmod((m + "/munge.key").c_str(), 0400) != 0) {
    return absl::InternalError("cannot hand the munge key to user munge");
  }
  pid_files_.push_back(m + "/munged.pid");
  // munged detaches once its socket is ready.
  return RunOk({"/usr/sbin/runuser", "-u", "munge", "--", "/usr/sbin/munged",
                "--socket=" + m + "/socket", "--key-file=" + m + "/munge.key",
                "--pid-file=" + m + "/munged.pid",
                "--log-file=" + m + "/munged.log",
                "--seed-file=" + m + "/munge.seed"});
}

absl::Status SlurmCluster::WriteConf(const Options& options) {
  absl::StatusOr<int> ctld = FreePort();
  absl::StatusOr<int> slurmd = FreePort();
  if (!ctld.ok()) return ctld.status();
  if (!slurmd.ok()) return slurmd.status();
  const std::string host = ShortHostname();
  conf_ = dir_ + "/slurm.conf";
  pid_files_.push_back(dir_ + "/slurmd.pid");
  pid_files_.push_back(dir_ + "/slurmctld.pid");
  const std::string text = absl::StrCat(
      "ClusterName=ringleader-test\n", "SlurmctldHost=", host, "\n",
      "SlurmUser=root\nSlurmdUser=root\n", "SlurmctldPort=", *ctld, "\n",
      "SlurmdPort=", *slurmd, "\n", "AuthType=auth/munge\n",
      "AuthInfo=socket=", dir_, "/munge/socket\n", "CredType=cred/munge\n",
      "StateSaveLocation=", dir_, "/state\n", "SlurmdSpoolDir=", dir_,
      "/spool\n", "SlurmctldPidFile=", dir_, "/slurmctld.pid\n",
      "SlurmdPidFile=", dir_, "/slurmd.pid\n", "SlurmctldLogFile=", dir_,
      "/slurmctld.log\n", "SlurmdLogFile=", dir_, "/slurmd.log\n",
      "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n",
      "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n",
      "MpiDefault=none\nReturnToService=2\nJobRequeue=1\n",
      // The node has the CPUs the test asks for, whatever this machine
      // has: the tasks are processes that share its cores.
      "SlurmdParameters=config_overrides\n", "KillWait=", options.kill_wait_s,
      "\n", "NodeName=", host, " CPUs=", options.cpus,
      " RealMemory=20000 State=UNKNOWN\n", "PartitionName=main Nodes=", host,
      " Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4\n");
  return WriteFile(conf_, text);
}

absl::Status SlurmCluster::StartSlurm() {
  if (absl::Status s = RunOk({"/usr/sbin/slurmctld", "-c", "-f", conf_});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = RunOk({"/usr/sbin/slurmd", "-f", conf_}); !s.ok()) {
    return s;
  }
  // Up when the controller lists the node idle.
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  std::string last;
  while (absl::Now() < give_up) {
    absl::StatusOr<ProcessResult> r =
        Client({"sinfo", "-h", "-o", "%T"}, absl::Seconds(10));
    if (r.ok()) {
      last = std::string(absl::StripAsciiWhitespace(r->out));
      if (last == "idle") return absl::OkStatus();
    }
    absl::SleepFor(kPoll);
  }
  return absl::DeadlineExceededError(
      absl::StrCat("slurm's node is not idle after 60 s (sinfo: ", last, ")"));
}

SlurmCluster::~SlurmCluster() { StopAll(); }

void SlurmCluster::StopAll() {
  if (!conf_.empty()) {
    // Jobs first: a job step's slurmstepd outlives slurmd.
    Client({"scancel", "--full", "--user=root"}, absl::Seconds(10))
        .IgnoreError();
    const absl::Time give_up = absl::Now() + absl::Seconds(60);
    while (absl::Now() < give_up) {
      absl::StatusOr<ProcessResult> q =
          Client({"squeue", "-h", "-o", "%i"}, absl::Seconds(10));
      if (!q.ok() || absl::StripAsciiWhitespace(q->out).empty()) break;
      absl::SleepFor(kPoll);
    }
  }
  for (const std::string& p : pid_files_) {
    StopPid(PidIn(p), absl::Seconds(10));
  }
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

absl::StatusOr<ProcessResult> SlurmCluster::Client(
    std::vector<std::string> argv, absl::Duration timeout,
    const std::vector<std::string>& env) {
  if (argv.empty()) return absl::InvalidArgumentError("no command");
  if (argv[0].find('/') == std::string::npos) {
    argv[0] =
        (argv[0] == "sbatch" || argv[0] == "srun" || argv[0] == "squeue" ||
         argv[0] == "scancel" || argv[0] == "scontrol" || argv[0] == "sinfo")
            ? "/usr/bin/" + argv[0]
            : argv[0];
  }
  ProcessOptions options;
  options.env.emplace_back("SLURM_CONF", conf_);
  for (const std::string& kv : env) {
    const size_t eq = kv.find('=');
    options.env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return RunProcess(argv, timeout, options);
}

absl::StatusOr<std::string> SlurmCluster::Submit(
    const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  absl::StatusOr<ProcessResult> r = Client(argv, absl::Seconds(60), env);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat("sbatch: ", r->err, r->out));
  }
  // "JOBID" or "JOBID;CLUSTER".
  std::string id(absl::StripAsciiWhitespace(r->out));
  return id.substr(0, id.find(';'));
}

absl::StatusOr<std::string> SlurmCluster::JobState(const std::string& job_id) {
  absl::StatusOr<ProcessResult> r =
      Client({"scontrol", "-o", "show", "job", job_id}, absl::Seconds(30));
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) return std::string();  // Purged: unknown.
  for (absl::string_view field : absl::StrSplit(r->out, ' ')) {
    if (absl::ConsumePrefix(&field, "JobState=")) return std::string(field);
  }
  return std::string();
}

absl::StatusOr<std::string> SlurmCluster::WaitForJobState(
    const std::string& job_id, const std::vector<std::string>& states,
    absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  std::string last;
  while (true) {
    absl::StatusOr<std::string> s = JobState(job_id);
    if (!s.ok()) return s.status();
    last = *s;
    for (const std::string& want : states) {
      if (last == want) return last;
    }
    if (absl::Now() >= give_up) break;
    absl::SleepFor(kPoll);
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "Slurm job ", job_id, " is ", last.empty() ? "gone" : last, " after ",
      absl::FormatDuration(timeout), ", not ", absl::StrJoin(states, " or ")));
}

absl::StatusOr<std::vector<std::string>> SlurmCluster::RunningSteps(
    const std::string& job_id) {
  absl::StatusOr<ProcessResult> r = Client(
      {"squeue", "-h", "-s", "-j", job_id, "-o", "%i"}, absl::Seconds(30));
  if (!r.ok()) return r.status();
  std::vector<std::string> steps;
  for (absl::string_view line : absl::StrSplit(r->out, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::EndsWith(line, ".batch") ||
        absl::EndsWith(line, ".extern")) {
      continue;
    }
    steps.emplace_back(line);
  }
  return steps;
}

std::string SlurmCluster::Logs() const {
  std::string out;
  for (const char* f : {"/slurmctld.log", "/slurmd.log", "/munge/munged.log"}) {
    std::string text = ReadFileOrEmpty(dir_ + f);
    if (text.size() > 3000) text = text.substr(text.size() - 3000);
    absl::StrAppend(&out, "\n--- ", f, " (tail) ---\n", text);
  }
  return out;
}

}  // namespace ringleader::testing
