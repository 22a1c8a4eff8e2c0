// The real ringctl binary against the real coordinator binary: output,
// exit codes and the errors a user sees (one line, or a line per invalid
// field of a job spec).
#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "tests/cli/coordinator_process.h"
#include "tests/testing/process.h"

namespace ringleader {
namespace {

using testing::CoordinatorProcess;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using testing::ProcessResult;
using ::testing::StartsWith;

constexpr absl::Duration kCommandTimeout = absl::Seconds(30);

// A job the validator accepts; no worker ever runs it, so it stays PENDING.
const std::vector<std::string> kJobFlags = {
    "--model=mlp", "--dataset=synthetic", "--train_size=100", "--optimizer=sgd",
    "--lr=0.1",    "--epochs=1",          "--batch_size=8",   "--workers=2"};

class RingctlTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    CoordinatorProcess::Options options;
    // Long leases: the test's registered worker never heartbeats.
    options.extra_flags = {"--lease_ms=600000", "--heartbeat_ms=1000"};
    auto c = CoordinatorProcess::Start(options);
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = c->release();
  }

  static void TearDownTestSuite() {
    delete coordinator_;
    coordinator_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(coordinator_, nullptr) << "coordinator did not start";
  }

  // Runs ringctl with `args` against the test's coordinator (unless the
  // args or `env` name another), with RINGLEADER_COORDINATOR unset.
  static ProcessResult Ringctl(
      const std::vector<std::string>& args,
      std::vector<std::pair<std::string, std::optional<std::string>>> env = {
          {"RINGLEADER_COORDINATOR", std::nullopt}}) {
    std::vector<std::string> argv = {testing::RunfilePath("cli/ringctl")};
    const bool names_coordinator =
        std::any_of(args.begin(), args.end(), [](const std::string& a) {
          return absl::StartsWith(a, "--coordinator");
        });
    bool env_names_coordinator = false;
    for (const auto& [key, value] : env) {
      env_names_coordinator |=
          key == "RINGLEADER_COORDINATOR" && value.has_value();
    }
    if (!names_coordinator && !env_names_coordinator) {
      argv.push_back("--coordinator=" + coordinator_->address());
    }
    argv.insert(argv.end(), args.begin(), args.end());
    testing::ProcessOptions options;
    options.env = std::move(env);
    absl::StatusOr<ProcessResult> r =
        testing::RunProcess(argv, kCommandTimeout, options);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return ProcessResult{};
    EXPECT_FALSE(r->timed_out) << absl::StrJoin(args, " ");
    return *r;
  }

  // Submits a PENDING job named `name`; its id.
  static std::string Submit(const std::string& name) {
    std::vector<std::string> args = {"submit", "--name=" + name};
    args.insert(args.end(), kJobFlags.begin(), kJobFlags.end());
    const ProcessResult r = Ringctl(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::string id = r.out;
    absl::StripTrailingAsciiWhitespace(&id);
    return id;
  }

  static std::string WriteFile(const std::string& name,
                               const std::string& text) {
    const std::string path = testing::TestTempDir() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  static CoordinatorProcess* coordinator_;
};

CoordinatorProcess* RingctlTest::coordinator_ = nullptr;

// Exactly one line on stderr, "ringctl: ...", containing `needle`.
void ExpectOneLineError(const ProcessResult& r, int exit_code,
                        const std::string& needle) {
  EXPECT_EQ(r.exit_code, exit_code)
      << "stdout: " << r.out << "stderr: " << r.err;
  EXPECT_THAT(r.err, StartsWith("ringctl: "));
  EXPECT_THAT(r.err, HasSubstr(needle));
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.back(), '\n');
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(RingctlTest, SubmitFromFlagsPrintsTheJobId) {
  std::vector<std::string> args = {"submit", "--name=flags"};
  args.insert(args.end(), kJobFlags.begin(), kJobFlags.end());
  const ProcessResult r = Ringctl(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, MatchesRegex("flags-[0-9]+\n"));
  EXPECT_EQ(r.err, "");
}

TEST_F(RingctlTest, SubmitJsonPrintsAnObjectWithTheId) {
  std::vector<std::string> args = {"--output=json", "submit", "--name=js"};
  args.insert(args.end(), kJobFlags.begin(), kJobFlags.end());
  const ProcessResult r = Ringctl(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_THAT(j["job_id"].get<std::string>(), StartsWith("js-"));
}

TEST_F(RingctlTest, SubmitFromFileWithFlagOverrides) {
  const std::string path = WriteFile("job.textproto", R"pb(
    name: "from-file"
    model { arch: MODEL_ARCH_CNN }
    dataset { format: DATASET_FORMAT_SYNTHETIC synthetic_train_size: 50 }
    optimizer { kind: OPTIMIZER_KIND_ADAM learning_rate: 0.001 }
    epochs: 4
    batch_size: 16
    min_workers: 1
    max_workers: 2
  )pb");
  const ProcessResult r =
      Ringctl({"submit", "--file=" + path, "--name=overridden", "--epochs=9"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string id = r.out;
  absl::StripTrailingAsciiWhitespace(&id);
  const ProcessResult got = Ringctl({"get", id, "--output=json"});
  ASSERT_EQ(got.exit_code, 0) << got.err;
  const nlohmann::json j = nlohmann::json::parse(got.out);
  EXPECT_EQ(j["spec"]["name"], "overridden");
  EXPECT_EQ(j["spec"]["epochs"], 9);
  EXPECT_EQ(j["spec"]["model"]["arch"], "MODEL_ARCH_CNN");
  EXPECT_EQ(j["spec"]["batchSize"], 16);

  // The file may also be given as the positional FILE.
  const ProcessResult positional = Ringctl({"submit", path});
  EXPECT_EQ(positional.exit_code, 0) << positional.err;
  EXPECT_THAT(positional.out, MatchesRegex("from-file-[0-9]+\n"));
}

TEST_F(RingctlTest, GetTextAndJson) {
  const std::string id = Submit("get");
  const ProcessResult text = Ringctl({"get", id});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("ID          " + id + "\n"));
  EXPECT_THAT(text.out, HasSubstr("STATE       PENDING\n"));
  EXPECT_THAT(text.out, HasSubstr("WORKERS     0 (min 2, max 2)\n"));
  EXPECT_THAT(text.out, HasSubstr("MODEL       mlp 256,128\n"));
  // Global flags may come after the subcommand too.
  const ProcessResult json = Ringctl({"get", id, "-o", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["jobId"], id);
  EXPECT_EQ(j["state"], "JOB_STATE_PENDING");
  EXPECT_EQ(j["spec"]["optimizer"]["learningRate"], 0.1);
}

TEST_F(RingctlTest, ListTextJsonAndStateFilter) {
  const std::string id = Submit("list");
  const ProcessResult text = Ringctl({"list"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::vector<std::string> lines = absl::StrSplit(text.out, '\n');
  ASSERT_GE(lines.size(), 2u);
  EXPECT_THAT(lines[0], MatchesRegex("ID +STATE +GEN +WORKERS +EPOCH +"
                                     "STEP/TOTAL +LOSS +SAMPLES/S +RESTARTS"));
  EXPECT_THAT(text.out, ::testing::ContainsRegex(id + " +PENDING +0 +0 +- +"
                                                      "- +- +- +0\n"));

  const ProcessResult json = Ringctl({"list", "--output=json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_TRUE(j["jobs"].is_array());
  bool found = false;
  for (const auto& job : j["jobs"]) found |= job["jobId"] == id;
  EXPECT_TRUE(found) << json.out;

  const ProcessResult none =
      Ringctl({"list", "--state=succeeded", "--output=json"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(nlohmann::json::parse(none.out)["jobs"], nlohmann::json::array());
  const ProcessResult pending = Ringctl({"list", "--state=pending,running"});
  ASSERT_EQ(pending.exit_code, 0) << pending.err;
  EXPECT_THAT(pending.out, HasSubstr(id));
}

TEST_F(RingctlTest, WorkersTextAndJson) {
  auto stub = v1::WorkerService::NewStub(grpc::CreateChannel(
      coordinator_->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  v1::RegisterRequest req;
  req.set_hostname("it-host");
  req.set_device("cpu");
  req.set_pid(4242);
  req.set_address("127.0.0.1:1");
  v1::RegisterResponse resp;
  ASSERT_TRUE(stub->Register(&ctx, req, &resp).ok());

  const ProcessResult text = Ringctl({"workers"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, StartsWith("ID"));
  EXPECT_THAT(text.out, HasSubstr("LAST HEARTBEAT\n"));
  EXPECT_THAT(text.out,
              ::testing::ContainsRegex(resp.worker_id() +
                                       " +it-host +cpu +IDLE +- +[0-9]+s ago"));

  const ProcessResult json = Ringctl({"workers", "--output=json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_TRUE(j["workers"].is_array());
  bool found = false;
  for (const auto& w : j["workers"]) {
    found |= w["workerId"] == resp.worker_id() && w["hostname"] == "it-host";
  }
  EXPECT_TRUE(found) << json.out;
}

TEST_F(RingctlTest, CancelThenWatchEndsCancelledWithExit1) {
  const std::string id = Submit("cancel");
  const ProcessResult cancel = Ringctl({"cancel", id});
  ASSERT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_EQ(cancel.out, "job " + id + " CANCELLED\n");

  const ProcessResult watch = Ringctl({"watch", id});
  ExpectOneLineError(watch, 1, "job " + id + " CANCELLED: cancelled by user");
  EXPECT_THAT(watch.out, StartsWith("CANCELLED"));
  EXPECT_THAT(watch.out,
              HasSubstr("job " + id + " CANCELLED: cancelled by user\n"));

  // NDJSON: every line is one object.
  const ProcessResult json = Ringctl({"watch", id, "--output=json"});
  EXPECT_EQ(json.exit_code, 1);
  int lines = 0;
  for (absl::string_view line :
       absl::StrSplit(json.out, '\n', absl::SkipEmpty())) {
    const nlohmann::json j = nlohmann::json::parse(line);
    EXPECT_EQ(j["state"], "JOB_STATE_CANCELLED");
    ++lines;
  }
  EXPECT_GE(lines, 1);
}

TEST_F(RingctlTest, CancelJsonPrintsTheJob) {
  const std::string id = Submit("cancel-json");
  const ProcessResult r = Ringctl({"--output=json", "cancel", id});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["state"], "JOB_STATE_CANCELLED");
}

TEST_F(RingctlTest, UnknownJobIsExit1WithTheId) {
  for (const char* command : {"get", "cancel", "watch", "delete"}) {
    SCOPED_TRACE(command);
    const ProcessResult r = Ringctl({command, "foo-9"});
    ExpectOneLineError(r, 1, "job \"foo-9\" does not exist");
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(RingctlTest, DeleteOnlyAFinishedJob) {
  const std::string id = Submit("del");
  ExpectOneLineError(Ringctl({"delete", id}), 1, "cancel it first");
  ASSERT_EQ(Ringctl({"cancel", id}).exit_code, 0);
  const ProcessResult r = Ringctl({"delete", id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "job " + id + " deleted\n");
  ExpectOneLineError(Ringctl({"get", id}), 1, "does not exist");
  EXPECT_THAT(Ringctl({"list"}).out, ::testing::Not(HasSubstr(id + " ")));

  const std::string json_id = Submit("del");
  ASSERT_EQ(Ringctl({"cancel", json_id}).exit_code, 0);
  const ProcessResult json = Ringctl({"delete", json_id, "--output=json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["job_id"], json_id);
}

TEST_F(RingctlTest, UnreachableCoordinatorIsExit1) {
  const std::string want =
      "ringctl: cannot reach coordinator at 127.0.0.1:1 (is it running?)\n";
  for (const char* command : {"list", "workers"}) {
    const ProcessResult r =
        Ringctl({"--coordinator=127.0.0.1:1", "--timeout=5s", command});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, want);
  }
  const ProcessResult watch =
      Ringctl({"--coordinator=127.0.0.1:1", "watch", "x-1"});
  EXPECT_EQ(watch.exit_code, 1);
  EXPECT_EQ(watch.err, want);
}

TEST_F(RingctlTest, CoordinatorFromTheEnvironment) {
  const ProcessResult r =
      Ringctl({"list"}, {{"RINGLEADER_COORDINATOR", coordinator_->address()}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const ProcessResult bad =
      Ringctl({"list"}, {{"RINGLEADER_COORDINATOR", "127.0.0.1:1"}});
  ExpectOneLineError(bad, 1, "cannot reach coordinator at 127.0.0.1:1");
  // The flag beats the environment.
  const ProcessResult flag =
      Ringctl({"--coordinator=" + coordinator_->address(), "list"},
              {{"RINGLEADER_COORDINATOR", "127.0.0.1:1"}});
  EXPECT_EQ(flag.exit_code, 0) << flag.err;
}

TEST_F(RingctlTest, InvalidSpecIsExit2BeforeAnyRpc) {
  std::vector<std::string> args = {"--coordinator=127.0.0.1:1", "submit",
                                   "--name=bad"};
  args.insert(args.end(), kJobFlags.begin(), kJobFlags.end());
  args.push_back("--lr=-1");
  const ProcessResult r = Ringctl(args);
  ExpectOneLineError(r, 2,
                     "invalid job spec: optimizer.learning_rate must be > 0");
  EXPECT_EQ(r.out, "");
}

TEST_F(RingctlTest, AnInvalidSpecGetsALinePerBadField) {
  // No file, one bad flag: every missing field and the bad one, each on a
  // "ringctl: " line of its own with the flag that sets it, as a compiler
  // lists its errors.
  const ProcessResult r =
      Ringctl({"--coordinator=127.0.0.1:1", "submit", "--epochs=-3"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.back(), '\n');
  std::vector<std::string> fields, flags;
  for (absl::string_view line :
       absl::StrSplit(r.err, '\n', absl::SkipEmpty())) {
    ASSERT_TRUE(absl::ConsumePrefix(&line, "ringctl: invalid job spec: "))
        << line;
    fields.emplace_back(line.substr(0, line.find(' ')));
    flags.emplace_back(line.substr(line.rfind("(flag ")));
  }
  EXPECT_EQ(fields, (std::vector<std::string>{
                        "name", "model.arch", "dataset.format",
                        "optimizer.kind", "optimizer.learning_rate", "epochs",
                        "batch_size", "min_workers"}))
      << r.err;
  EXPECT_EQ(flags, (std::vector<std::string>{
                       "(flag --name)", "(flag --model)", "(flag --dataset)",
                       "(flag --optimizer)", "(flag --lr)", "(flag --epochs)",
                       "(flag --batch_size)", "(flag --min_workers)"}))
      << r.err;
  EXPECT_THAT(r.err, HasSubstr("ringctl: invalid job spec: epochs must be in "
                               "[1, 100000] (got -3) (flag --epochs)\n"));
}

TEST_F(RingctlTest, BadJobFilesAreExit2) {
  const std::string garbage = WriteFile("garbage.textproto", "this is { not");
  ExpectOneLineError(Ringctl({"submit", "--file=" + garbage}), 2, garbage);
  const std::string json = WriteFile("garbage.json", "[1, 2");
  ExpectOneLineError(Ringctl({"submit", "--file=" + json}), 2, json);
  ExpectOneLineError(Ringctl({"submit", "--file=/no/such/job.textproto"}), 2,
                     "/no/such/job.textproto");
  const std::string yaml = WriteFile("job.yaml", "name: x\n");
  ExpectOneLineError(Ringctl({"submit", "--file=" + yaml}), 2, yaml);
}

TEST_F(RingctlTest, BadFlagsAreExit2) {
  ExpectOneLineError(Ringctl({"submit", "--bogus=1"}), 2, "--bogus");
  ExpectOneLineError(Ringctl({"submit", "--epochs=many"}), 2, "--epochs");
  ExpectOneLineError(Ringctl({"submit", "--model=resnet"}), 2, "--model");
  ExpectOneLineError(Ringctl({"--output=yaml", "list"}), 2, "--output");
  ExpectOneLineError(Ringctl({"--timeout=0", "list"}), 2, "--timeout");
  ExpectOneLineError(Ringctl({"list", "--state=done"}), 2, "done");
  ExpectOneLineError(Ringctl({"get"}), 2, "JOB");
  ExpectOneLineError(Ringctl({}), 2, "subcommand");
  ExpectOneLineError(Ringctl({"frobnicate"}), 2, "frobnicate");
}

TEST_F(RingctlTest, HelpForEverySubcommandIsExit0) {
  for (std::vector<std::string> args :
       std::vector<std::vector<std::string>>{{"--help"},
                                             {"submit", "--help"},
                                             {"get", "--help"},
                                             {"list", "--help"},
                                             {"cancel", "--help"},
                                             {"delete", "--help"},
                                             {"watch", "--help"},
                                             {"workers", "--help"},
                                             {"-h"}}) {
    SCOPED_TRACE(absl::StrJoin(args, " "));
    const ProcessResult r = Ringctl(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("Usage:"));
    EXPECT_EQ(r.err, "");
  }
  EXPECT_THAT(Ringctl({"submit", "--help"}).out, HasSubstr("--grad_accum"));
}

}  // namespace
}  // namespace ringleader
