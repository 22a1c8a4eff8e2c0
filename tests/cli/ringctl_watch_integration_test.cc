// `ringctl watch` (and `submit --watch`) following a job to its end. The
// worker side is scripted over the real WorkerService, one step at a time.
// ringctl's stdout is a file, so it paces its lines as for a log: a test
// that needs a step's line repeats the report until the line is printed.
#include <algorithm>
#include <future>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/worker_credential.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "tests/cli/coordinator_process.h"
#include "tests/testing/process.h"

namespace ringleader {
namespace {

using testing::CoordinatorProcess;
using ::testing::HasSubstr;
using testing::Subprocess;

constexpr absl::Duration kStepTimeout = absl::Seconds(20);

std::unique_ptr<grpc::ClientContext> Context() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + kStepTimeout));
  return ctx;
}

// One worker daemon's protocol, driven by hand. The coordinator takes one
// (hostname, pid) for one worker process: two scripted workers need two pids.
class ScriptedWorker {
 public:
  explicit ScriptedWorker(const std::string& address, int32_t pid = 1)
      : stub_(v1::WorkerService::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))),
        pid_(pid) {}

  // After Register, every call carries the worker's credential.
  std::unique_ptr<grpc::ClientContext> WorkerContext() const {
    std::unique_ptr<grpc::ClientContext> ctx = Context();
    AttachWorkerCredential(ctx.get(), credential_);
    return ctx;
  }

  grpc::Status Register() {
    v1::RegisterRequest req;
    req.set_hostname("scripted");
    req.set_device("cpu");
    req.set_pid(pid_);
    req.set_address("127.0.0.1:1");
    v1::RegisterResponse resp;
    grpc::Status s = stub_->Register(Context().get(), req, &resp);
    worker_id_ = resp.worker_id();
    credential_ = {resp.worker_id(), resp.worker_token()};
    return s;
  }

  // The job the next heartbeat assigns, or "" (the job exists already, so
  // the first heartbeat carries it).
  std::string HeartbeatForAssignment() {
    v1::HeartbeatRequest req;
    req.set_worker_id(worker_id_);
    v1::HeartbeatResponse resp;
    if (!stub_->Heartbeat(WorkerContext().get(), req, &resp).ok()) return "";
    return resp.assignment().job_id();
  }

  grpc::Status Join(const std::string& job_id) {
    job_id_ = job_id;
    v1::JoinRendezvousRequest req;
    req.set_job_id(job_id);
    req.set_worker_id(worker_id_);
    req.set_timeout_ms(absl::ToInt64Milliseconds(kStepTimeout) / 2);
    v1::JoinRendezvousResponse resp;
    grpc::Status s = stub_->JoinRendezvous(WorkerContext().get(), req, &resp);
    generation_ = resp.generation();
    rank_ = resp.rank();
    return s;
  }

  grpc::Status Report(int64_t step, int64_t total, bool finished) {
    v1::ReportProgressRequest req;
    req.set_job_id(job_id_);
    req.set_generation(generation_);
    req.set_rank(rank_);
    req.set_epoch(0);
    req.set_step(step);
    req.set_total_steps(total);
    req.set_loss(0.75);
    req.set_samples_per_sec(finished ? 0 : 80);
    if (finished) {
      req.set_finished(true);
      req.set_final_train_loss(0.25);
      req.set_test_correct(90);
      req.set_test_samples(100);
    }
    v1::ReportProgressResponse resp;
    return stub_->ReportProgress(WorkerContext().get(), req, &resp);
  }

  grpc::Status Leave() {
    v1::LeaveRequest req;
    req.set_worker_id(worker_id_);
    req.set_reason("scripted worker leaves");
    v1::LeaveResponse resp;
    return stub_->Leave(WorkerContext().get(), req, &resp);
  }

 private:
  std::unique_ptr<v1::WorkerService::Stub> stub_;
  int32_t pid_;
  std::string worker_id_;
  WorkerCredential credential_;
  std::string job_id_;
  int64_t generation_ = 0;
  int32_t rank_ = 0;
};

class RingctlWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CoordinatorProcess::Options options;
    options.extra_flags = {"--lease_ms=600000", "--heartbeat_ms=1000"};
    auto c = CoordinatorProcess::Start(options);
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = *std::move(c);
    out_path_ = coordinator_->dir() + "/ringctl.out";
    err_path_ = coordinator_->dir() + "/ringctl.err";
  }

  // Starts `ringctl --coordinator=... args...` in the background; its
  // stdout (a file, so not a terminal: one line per update) in out_path_.
  void StartRingctl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {
        testing::RunfilePath("cli/ringctl"),
        "--coordinator=" + coordinator_->address()};
    argv.insert(argv.end(), args.begin(), args.end());
    testing::ProcessOptions options;
    options.stdout_path = out_path_;
    options.stderr_path = err_path_;
    options.env = {{"RINGLEADER_COORDINATOR", std::nullopt}};
    auto p = Subprocess::Start(argv, options);
    ASSERT_TRUE(p.ok()) << p.status();
    ringctl_ = *std::move(p);
  }

  // Waits until ringctl printed `needle`.
  void AwaitOutput(const std::string& needle) {
    absl::StatusOr<std::string> out = testing::WaitForFileContaining(
        out_path_, needle, kStepTimeout, ringctl_.get());
    ASSERT_TRUE(out.ok()) << out.status() << "\nstderr: "
                          << testing::ReadFileOrEmpty(err_path_);
  }

  // Reports `step` of `total` until ringctl printed `needle`: a log gets
  // a new step's line only a second after its last line, and each report is
  // an update that can be the one to print it.
  void ReportUntilPrinted(ScriptedWorker& worker, int64_t step, int64_t total,
                          const std::string& needle) {
    const absl::Time deadline = absl::Now() + kStepTimeout;
    while (true) {
      ASSERT_TRUE(worker.Report(step, total, false).ok());
      if (testing::WaitForFileContaining(
              out_path_, needle, absl::Milliseconds(200), ringctl_.get())
              .ok()) {
        return;
      }
      ASSERT_LT(absl::Now(), deadline)
          << "no \"" << needle << "\" in: " << Out() << "\nstderr: " << Err();
    }
  }

  int AwaitExit() {
    std::optional<int> code = ringctl_->Wait(kStepTimeout);
    EXPECT_TRUE(code.has_value()) << "ringctl did not exit";
    return code.value_or(-1);
  }

  std::string Out() { return testing::ReadFileOrEmpty(out_path_); }
  std::string Err() { return testing::ReadFileOrEmpty(err_path_); }

  // Gets the scripted worker into generation 1 of the job ringctl submitted.
  void AssignAndJoin(ScriptedWorker& worker) {
    const std::string job_id = worker.HeartbeatForAssignment();
    ASSERT_EQ(job_id, "follow-1");
    ASSERT_TRUE(worker.Join(job_id).ok());
    AwaitOutput("RUNNING gen 1 world 1");
  }

  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::unique_ptr<Subprocess> ringctl_;
  std::string out_path_;
  std::string err_path_;
};

const std::vector<std::string> kSubmitAndWatch = {"submit",
                                                  "--watch",
                                                  "--name=follow",
                                                  "--model=mlp",
                                                  "--dataset=synthetic",
                                                  "--train_size=80",
                                                  "--optimizer=sgd",
                                                  "--lr=0.1",
                                                  "--epochs=1",
                                                  "--batch_size=8",
                                                  "--workers=1",
                                                  "--last_call_ms=1"};

TEST_F(RingctlWatchTest, SubmitWatchFollowsToSuccessWithFinalMetrics) {
  ScriptedWorker worker(coordinator_->address());
  ASSERT_TRUE(worker.Register().ok());
  StartRingctl(kSubmitAndWatch);
  AwaitOutput("follow-1\nPENDING\n");
  AssignAndJoin(worker);

  // 5 steps left x 8 samples / 80 samples/s = 0.5 s, shown rounded up.
  ReportUntilPrinted(
      worker, 5, 10,
      "RUNNING gen 1 world 1 epoch 1/1 [##########----------]  50.0% 5/10 "
      "loss 0.7500 80.0 samples/s ETA 1s\n");
  ASSERT_TRUE(worker.Report(10, 10, true).ok());

  EXPECT_EQ(AwaitExit(), 0) << Err();
  const std::string out = Out();
  EXPECT_THAT(out, HasSubstr("SUCCEEDED gen 1 world 1"));
  EXPECT_THAT(out, HasSubstr("job follow-1 SUCCEEDED"));
  EXPECT_THAT(out, HasSubstr("final train loss 0.2500, test accuracy "
                             "90.00%\n"));
  EXPECT_EQ(Err(), "");
}

// The step of a status line ("... 5/20 loss ..."), or -1 for a line before
// the first report, which shows no step.
int64_t StepOf(const std::string& line, int64_t total) {
  std::smatch m;
  const std::regex step(absl::StrCat(" ([0-9]+)/", total, " "));
  return std::regex_search(line, m, step) ? std::stoll(m[1]) : -1;
}

TEST_F(RingctlWatchTest, ALogGetsALinePerNewStepAtMostOncePerSecond) {
  // Two ranks report each of 20 steps: 40 updates, which a terminal
  // redraws. A log gets the state changes, a step line at most once a second
  // (and at each quarter of the run) and never twice for one step, and the
  // summary.
  constexpr int64_t kSteps = 20;
  ScriptedWorker w0(coordinator_->address(), 1), w1(coordinator_->address(), 2);
  ASSERT_TRUE(w0.Register().ok());
  ASSERT_TRUE(w1.Register().ok());
  std::vector<std::string> args = kSubmitAndWatch;
  std::replace(args.begin(), args.end(), std::string("--workers=1"),
               std::string("--workers=2"));
  const absl::Time started = absl::Now();
  StartRingctl(args);
  AwaitOutput("PENDING\n");
  ASSERT_EQ(w0.HeartbeatForAssignment(), "follow-1");
  ASSERT_EQ(w1.HeartbeatForAssignment(), "follow-1");
  // The rendezvous completes when both have joined: join concurrently.
  std::future<grpc::Status> join1 =
      std::async(std::launch::async, [&w1] { return w1.Join("follow-1"); });
  ASSERT_TRUE(w0.Join("follow-1").ok());
  ASSERT_TRUE(join1.get().ok());
  for (int64_t step = 1; step <= kSteps; ++step) {
    ASSERT_TRUE(w0.Report(step, kSteps, step == kSteps).ok());
    ASSERT_TRUE(w1.Report(step, kSteps, step == kSteps).ok());
  }
  ASSERT_EQ(AwaitExit(), 0) << Err();
  const absl::Duration elapsed = absl::Now() - started;

  const std::string out = Out();
  const std::vector<std::string> lines =
      absl::StrSplit(out, '\n', absl::SkipEmpty());
  int64_t running = 0, last_step = -2;
  for (const std::string& line : lines) {
    if (!absl::StartsWith(line, "RUNNING")) continue;
    ++running;
    const int64_t step = StepOf(line, kSteps);
    EXPECT_GT(step, last_step) << "a step printed twice:\n" << out;
    last_step = step;
  }
  // The state change's line, then at most one a second, plus one as each
  // quarter of the run passes (LogLinePacer).
  EXPECT_GE(running, 1) << out;
  EXPECT_LE(running, 1 + 3 + absl::ToInt64Seconds(elapsed)) << out;
  // The id, PENDING, maybe RENDEZVOUS, the RUNNING lines, SUCCEEDED and the
  // two summary lines.
  EXPECT_LE(lines.size(), static_cast<size_t>(running + 6)) << out;
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[lines.size() - 2],
            "job follow-1 SUCCEEDED: all ranks finished");
  EXPECT_EQ(lines.back(), "final train loss 0.2500, test accuracy 90.00%");
  EXPECT_EQ(Err(), "");
}

TEST_F(RingctlWatchTest, WatchOfAFailedJobIsExit1WithItsMessage) {
  ScriptedWorker worker(coordinator_->address());
  ASSERT_TRUE(worker.Register().ok());
  std::vector<std::string> args = kSubmitAndWatch;
  args.push_back("--max_restarts=0");
  StartRingctl(args);
  AwaitOutput("PENDING\n");
  AssignAndJoin(worker);
  // The only worker goes, no restart is allowed: the job fails.
  ASSERT_TRUE(worker.Leave().ok());

  EXPECT_EQ(AwaitExit(), 1);
  EXPECT_THAT(Out(), HasSubstr("job follow-1 FAILED"));
  const std::string err = Err();
  EXPECT_THAT(err, ::testing::StartsWith("ringctl: job follow-1 FAILED"));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace
}  // namespace ringleader
