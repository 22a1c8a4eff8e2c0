// The real binaries with TLS and a bearer token: a coordinator with
// --tls_cert/--tls_key/--tls_client_ca/--auth_token_file, ringctl with
// --tls_ca and --token/--token_file/$RINGLEADER_TOKEN, and ringleader-worker
// with and without its client certificate. Certificates come from a
// throwaway CA made with openssl at test time.
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/coordinator_process.h"
#include "tests/testing/process.h"
#include "tests/testing/test_pki.h"

namespace ringleader {
namespace {

using testing::CoordinatorProcess;
using ::testing::HasSubstr;
using testing::ProcessResult;
using testing::TestPki;

constexpr absl::Duration kCommandTimeout = absl::Seconds(30);
constexpr char kToken[] = "integration-token-7f3a";

const std::vector<std::string> kJobFlags = {
    "--model=mlp", "--dataset=synthetic", "--train_size=100", "--optimizer=sgd",
    "--lr=0.1",    "--epochs=1",          "--batch_size=8",   "--workers=2"};

class RingctlSecurityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = testing::TestTempDir() + "/ringctl_security";
    absl::StatusOr<TestPki> pki = testing::MakeTestPki(dir, "rl");
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = new TestPki(*pki);
    token_file_ = new std::string(dir + "/token");
    // A trailing newline, as `echo` writes it, is not part of the token.
    std::ofstream(*token_file_) << kToken << "\n";
    CoordinatorProcess::Options options;
    options.extra_flags = {"--lease_ms=600000",
                           "--heartbeat_ms=1000",
                           "--tls_cert=" + pki_->server_cert,
                           "--tls_key=" + pki_->server_key,
                           "--tls_client_ca=" + pki_->ca_cert,
                           "--auth_token_file=" + *token_file_};
    auto c = CoordinatorProcess::Start(options);
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = c->release();
  }

  static void TearDownTestSuite() {
    delete coordinator_;
    delete pki_;
    delete token_file_;
    coordinator_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(coordinator_, nullptr) << "coordinator did not start";
  }

  // ringctl against the coordinator, trusting its CA unless `tls` is false,
  // with neither RINGLEADER_TOKEN nor RINGLEADER_COORDINATOR inherited
  // unless `env` sets them.
  static ProcessResult Ringctl(
      const std::vector<std::string>& args, bool tls = true,
      std::vector<std::pair<std::string, std::optional<std::string>>> env =
          {}) {
    std::vector<std::string> argv = {testing::RunfilePath("cli/ringctl"),
                                     "--coordinator=" + coordinator_->address(),
                                     "--timeout=10s"};
    if (tls) argv.push_back("--tls_ca=" + pki_->ca_cert);
    argv.insert(argv.end(), args.begin(), args.end());
    testing::ProcessOptions options;
    options.env = {{"RINGLEADER_COORDINATOR", std::nullopt},
                   {"RINGLEADER_TOKEN", std::nullopt}};
    for (auto& e : env) options.env.push_back(std::move(e));
    absl::StatusOr<ProcessResult> r =
        testing::RunProcess(argv, kCommandTimeout, options);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return ProcessResult{};
    EXPECT_FALSE(r->timed_out);
    return *r;
  }

  static std::vector<std::string> SubmitArgs(
      const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"submit", "--name=" + name};
    args.insert(args.end(), kJobFlags.begin(), kJobFlags.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  static std::string Trimmed(std::string s) {
    absl::StripTrailingAsciiWhitespace(&s);
    return s;
  }

  static CoordinatorProcess* coordinator_;
  static TestPki* pki_;
  static std::string* token_file_;
};

CoordinatorProcess* RingctlSecurityTest::coordinator_ = nullptr;
TestPki* RingctlSecurityTest::pki_ = nullptr;
std::string* RingctlSecurityTest::token_file_ = nullptr;

TEST_F(RingctlSecurityTest, SubmitWithoutTokenIsUnauthenticated) {
  const ProcessResult r = Ringctl(SubmitArgs("no-token"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("UNAUTHENTICATED"));
  EXPECT_THAT(r.err, HasSubstr("SubmitJob needs a bearer token"));
  // Nothing was submitted.
  const ProcessResult list = Ringctl({"list", "-o", "json"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, ::testing::Not(HasSubstr("no-token")));
}

TEST_F(RingctlSecurityTest, SubmitWithWrongTokenIsUnauthenticated) {
  const ProcessResult r = Ringctl(SubmitArgs("wrong-token", {"--token=nope"}));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("UNAUTHENTICATED"));
  EXPECT_THAT(r.err, HasSubstr("the bearer token is not the coordinator's"));
}

TEST_F(RingctlSecurityTest, TokenFromFlagFileOrEnvironmentSubmitsAndCancels) {
  const ProcessResult by_flag =
      Ringctl(SubmitArgs("by-flag", {std::string("--token=") + kToken}));
  ASSERT_EQ(by_flag.exit_code, 0) << by_flag.err;
  const std::string id = Trimmed(by_flag.out);
  ASSERT_FALSE(id.empty());

  // Read-only commands need no token.
  const ProcessResult get = Ringctl({"get", id});
  EXPECT_EQ(get.exit_code, 0) << get.err;

  const ProcessResult cancel_bare = Ringctl({"cancel", id});
  EXPECT_EQ(cancel_bare.exit_code, 1) << cancel_bare.err;
  EXPECT_THAT(cancel_bare.err, HasSubstr("CancelJob needs a bearer token"));

  const ProcessResult cancel =
      Ringctl({"cancel", id, "--token_file=" + *token_file_, "-o", "json"});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_THAT(cancel.out, HasSubstr("CANCELLED"));

  const ProcessResult by_env = Ringctl(SubmitArgs("by-env"), /*tls=*/true,
                                       {{"RINGLEADER_TOKEN", kToken}});
  EXPECT_EQ(by_env.exit_code, 0) << by_env.err;
  EXPECT_FALSE(Trimmed(by_env.out).empty());
}

TEST_F(RingctlSecurityTest, WithoutTheCaRingctlCannotConnect) {
  const ProcessResult r = Ringctl({"list"}, /*tls=*/false);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("cannot reach coordinator"));
}

TEST_F(RingctlSecurityTest, BothTokenFlagsAreAUsageError) {
  const ProcessResult r = Ringctl(
      SubmitArgs("both", {"--token=x", "--token_file=" + *token_file_}));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("exclusive"));
}

TEST_F(RingctlSecurityTest, WorkerWithClientCertificateRegisters) {
  const std::string log = testing::TestTempDir() + "/worker_mtls.log";
  testing::ProcessOptions options;
  options.stderr_path = log;
  options.env = {{"RINGLEADER_COORDINATOR", std::nullopt}};
  auto worker = testing::Subprocess::Start(
      {testing::RunfilePath("worker/ringleader-worker"),
       "--coordinator=" + coordinator_->address(), "--device=cpu",
       "--tls_ca=" + pki_->ca_cert, "--tls_cert=" + pki_->client_cert,
       "--tls_key=" + pki_->client_key},
      options);
  ASSERT_TRUE(worker.ok()) << worker.status();
  absl::StatusOr<std::string> logged = testing::WaitForFileContaining(
      log, "registered as", absl::Seconds(30), worker->get());
  ASSERT_TRUE(logged.ok()) << logged.status() << "\n"
                           << testing::ReadFileOrEmpty(log);
  const ProcessResult workers = Ringctl({"workers", "-o", "json"});
  EXPECT_EQ(workers.exit_code, 0) << workers.err;
  EXPECT_THAT(workers.out, HasSubstr("\"cpu\""));
}

TEST_F(RingctlSecurityTest, WorkerWithoutClientCertificateExits) {
  absl::StatusOr<ProcessResult> r =
      testing::RunProcess({testing::RunfilePath("worker/ringleader-worker"),
                           "--coordinator=" + coordinator_->address(),
                           "--device=cpu", "--tls_ca=" + pki_->ca_cert},
                          kCommandTimeout);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, 1) << r->err;
  EXPECT_THAT(r->err, HasSubstr("workers must present a client certificate"));
}

}  // namespace
}  // namespace ringleader
