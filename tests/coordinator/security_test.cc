// TLS and authentication of the coordinator over its real gRPC services on
// a loopback port, both ways: the right certificate and token get through;
// no client certificate, a certificate from another CA, the wrong CA for the
// server, and a missing or wrong bearer token are refused with the code a
// client can act on. Certificates come from a throwaway CA made with openssl.
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/tls_credentials.h"
#include "common/worker_credential.h"
#include "coordinator/server/coordinator_server.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "tests/testing/in_process_coordinator.h"
#include "tests/testing/job_specs.h"
#include "tests/testing/process.h"
#include "tests/testing/test_pki.h"

namespace ringleader {
namespace {

using grpc::StatusCode;
using testing::ClientContext;
using testing::InProcessCoordinator;
using testing::TestPki;

constexpr char kToken[] = "s3cret-token-0123456789";
// Bounds every call; a refused handshake answers well before it.
constexpr absl::Duration kCallTimeout = absl::Seconds(10);

::testing::AssertionResult Fails(const grpc::Status& s, StatusCode code,
                                 absl::string_view part) {
  if (s.error_code() == code && absl::StrContains(s.error_message(), part)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got code " << s.error_code() << " \"" << s.error_message()
         << "\"; want code " << code << " with \"" << part << "\"";
}

::testing::AssertionResult Ok(const grpc::Status& s) {
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got code " << s.error_code() << " \"" << s.error_message() << "\"";
}

class SecurityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = testing::TestTempDir() + "/security_test_pki";
    absl::StatusOr<TestPki> good = testing::MakeTestPki(dir, "good");
    absl::StatusOr<TestPki> other = testing::MakeTestPki(dir, "other");
    ASSERT_TRUE(good.ok()) << good.status();
    ASSERT_TRUE(other.ok()) << other.status();
    pki_ = new TestPki(*good);
    other_ = new TestPki(*other);
  }
  static void TearDownTestSuite() {
    delete pki_;
    delete other_;
  }

  void StartServer(bool tls, bool mutual, std::string token) {
    CoordinatorServerConfig config = InProcessCoordinator::Config();
    if (tls) {
      config.tls.cert = pki_->server_cert;
      config.tls.key = pki_->server_key;
      if (mutual) config.tls.client_ca = pki_->ca_cert;
    }
    config.auth_token = std::move(token);
    absl::StatusOr<std::unique_ptr<CoordinatorServer>> server =
        CoordinatorServer::Start(config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    target_ = absl::StrCat("127.0.0.1:", server_->port());
  }

  // A channel of its own (no connection shared with another test channel).
  std::shared_ptr<grpc::Channel> Channel(const ClientTlsFiles& files) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> creds =
        MakeChannelCredentials(files);
    EXPECT_TRUE(creds.ok()) << creds.status();
    if (!creds.ok()) return nullptr;
    grpc::ChannelArguments args;
    args.SetInt("ringleader.test_channel", channels_++);
    return grpc::CreateCustomChannel(target_, *creds, args);
  }
  static ClientTlsFiles WorkerFiles(const TestPki& server_ca,
                                    const TestPki* client) {
    ClientTlsFiles f;
    f.ca = server_ca.ca_cert;
    if (client != nullptr) {
      f.cert = client->client_cert;
      f.key = client->client_key;
    }
    return f;
  }

  grpc::Status Register(const std::shared_ptr<grpc::Channel>& channel,
                        WorkerCredential* registered = nullptr,
                        int32_t pid = 4242) {
    auto stub = v1::WorkerService::NewStub(channel);
    v1::RegisterRequest req;
    req.set_hostname("host");
    req.set_device("cpu");
    req.set_address("127.0.0.1");
    req.set_pid(pid);
    v1::RegisterResponse resp;
    grpc::Status s =
        stub->Register(ClientContext(kCallTimeout).get(), req, &resp);
    if (s.ok() && resp.worker_id().empty()) {
      return grpc::Status(StatusCode::INTERNAL, "no worker id");
    }
    if (registered != nullptr) *registered = testing::CredentialOf(resp);
    return s;
  }

  // A heartbeat of `worker`, carrying its credential, over `channel`.
  grpc::Status Heartbeat(const std::shared_ptr<grpc::Channel>& channel,
                         const WorkerCredential& worker) {
    auto stub = v1::WorkerService::NewStub(channel);
    v1::HeartbeatRequest req;
    req.set_worker_id(worker.worker_id);
    v1::HeartbeatResponse resp;
    return stub->Heartbeat(ClientContext(worker, kCallTimeout).get(), req,
                           &resp);
  }

  // Submits with `token` ("" sends no authorization metadata).
  grpc::Status Submit(const std::shared_ptr<grpc::Channel>& channel,
                      const std::string& token, std::string* job_id = nullptr,
                      const std::string& raw_authorization = "") {
    auto stub = v1::UserService::NewStub(channel);
    v1::SubmitJobRequest req;
    *req.mutable_spec() = testing::MinimalJobSpec("secure", 1, 1);
    v1::SubmitJobResponse resp;
    auto ctx = ClientContext(kCallTimeout);
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
    if (!raw_authorization.empty()) {
      ctx->AddMetadata("authorization", raw_authorization);
    }
    grpc::Status s = stub->SubmitJob(ctx.get(), req, &resp);
    if (job_id != nullptr) *job_id = resp.job_id();
    return s;
  }

  grpc::Status Cancel(const std::shared_ptr<grpc::Channel>& channel,
                      const std::string& token, const std::string& job_id,
                      v1::Job* job = nullptr) {
    auto stub = v1::UserService::NewStub(channel);
    v1::CancelJobRequest req;
    req.set_job_id(job_id);
    v1::Job resp;
    auto ctx = ClientContext(kCallTimeout);
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
    grpc::Status s = stub->CancelJob(ctx.get(), req, &resp);
    if (job != nullptr) *job = resp;
    return s;
  }

  grpc::Status GetJob(const std::shared_ptr<grpc::Channel>& channel,
                      const std::string& job_id, v1::Job* job) {
    auto stub = v1::UserService::NewStub(channel);
    v1::GetJobRequest req;
    req.set_job_id(job_id);
    return stub->GetJob(ClientContext(kCallTimeout).get(), req, job);
  }

  static TestPki* pki_;
  static TestPki* other_;
  std::unique_ptr<CoordinatorServer> server_;
  std::string target_;
  int channels_ = 0;
};

TestPki* SecurityTest::pki_ = nullptr;
TestPki* SecurityTest::other_ = nullptr;

TEST_F(SecurityTest, MutualTlsWorkerWithItsCertificateRegisters) {
  StartServer(/*tls=*/true, /*mutual=*/true, kToken);
  EXPECT_TRUE(Ok(Register(Channel(WorkerFiles(*pki_, pki_)))));
}

// A worker's token is bound to the client certificate it registered with:
// another machine with a certificate of the same CA (so its handshake
// passes) cannot speak for it even with its token.
TEST_F(SecurityTest, MutualTlsWorkerTokenIsRefusedUnderAnotherCertificate) {
  ASSERT_NO_FATAL_FAILURE(StartServer(/*tls=*/true, /*mutual=*/true, ""));
  ClientTlsFiles second = WorkerFiles(*pki_, nullptr);
  second.cert = pki_->second_client_cert;
  second.key = pki_->second_client_key;
  const std::shared_ptr<grpc::Channel> first_machine =
      Channel(WorkerFiles(*pki_, pki_));
  const std::shared_ptr<grpc::Channel> second_machine = Channel(second);
  WorkerCredential a, b;
  ASSERT_TRUE(Ok(Register(first_machine, &a, /*pid=*/1)));
  ASSERT_TRUE(Ok(Register(second_machine, &b, /*pid=*/2)));
  EXPECT_TRUE(Ok(Heartbeat(first_machine, a)));
  EXPECT_TRUE(Ok(Heartbeat(second_machine, b)));
  EXPECT_TRUE(Fails(Heartbeat(second_machine, a), StatusCode::UNAUTHENTICATED,
                    "registered with certificate \"good-worker\", not "
                    "\"good-worker-2\""));
  EXPECT_TRUE(Fails(Heartbeat(first_machine, b), StatusCode::UNAUTHENTICATED,
                    "registered with certificate \"good-worker-2\""));
  // The refusals changed nothing: each still speaks for itself.
  EXPECT_TRUE(Ok(Heartbeat(first_machine, a)));
  EXPECT_TRUE(Ok(Heartbeat(second_machine, b)));
}

TEST_F(SecurityTest, MutualTlsWorkerWithoutCertificateIsRefused) {
  StartServer(/*tls=*/true, /*mutual=*/true, kToken);
  std::shared_ptr<grpc::Channel> channel =
      Channel(WorkerFiles(*pki_, /*client=*/nullptr));
  // The connection itself is allowed (ringctl uses it with its token); every
  // WorkerService call on it is not.
  EXPECT_TRUE(Fails(Register(channel), StatusCode::UNAUTHENTICATED,
                    "workers must present a client certificate"));
  auto stub = v1::WorkerService::NewStub(channel);
  v1::HeartbeatRequest hb;
  hb.set_worker_id("w-1");
  v1::HeartbeatResponse hb_resp;
  EXPECT_TRUE(
      Fails(stub->Heartbeat(ClientContext(kCallTimeout).get(), hb, &hb_resp),
            StatusCode::UNAUTHENTICATED, "client certificate"));
  // Nothing registered through it.
  EXPECT_TRUE(
      server_->coordinator().user_calls().ListWorkers().workers().empty());
}

TEST_F(SecurityTest,
       MutualTlsWorkerWithCertificateFromAnotherCaFailsHandshake) {
  StartServer(/*tls=*/true, /*mutual=*/true, kToken);
  // Trusts the right server CA but presents a certificate another CA signed.
  grpc::Status s = Register(Channel(WorkerFiles(*pki_, other_)));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_TRUE(
      server_->coordinator().user_calls().ListWorkers().workers().empty());
}

TEST_F(SecurityTest, ClientTrustingAnotherCaFailsHandshake) {
  StartServer(/*tls=*/true, /*mutual=*/true, kToken);
  grpc::Status worker = Register(Channel(WorkerFiles(*other_, pki_)));
  EXPECT_EQ(worker.error_code(), StatusCode::UNAVAILABLE)
      << worker.error_message();
  grpc::Status user = Submit(Channel(WorkerFiles(*other_, nullptr)), kToken);
  EXPECT_EQ(user.error_code(), StatusCode::UNAVAILABLE) << user.error_message();
  EXPECT_TRUE(
      server_->coordinator().user_calls().ListWorkers().workers().empty());
}

TEST_F(SecurityTest, InsecureClientCannotTalkToTlsServer) {
  StartServer(/*tls=*/true, /*mutual=*/false, "");
  grpc::Status s = Register(Channel(ClientTlsFiles{}));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
}

TEST_F(SecurityTest, ServerTlsWithoutClientCaServesWorkersWithoutCertificate) {
  StartServer(/*tls=*/true, /*mutual=*/false, "");
  EXPECT_TRUE(Ok(Register(Channel(WorkerFiles(*pki_, nullptr)))));
  EXPECT_TRUE(Ok(Submit(Channel(WorkerFiles(*pki_, nullptr)), "")));
}

TEST_F(SecurityTest, UserOverTlsNeedsTheTokenForSubmitAndCancel) {
  StartServer(/*tls=*/true, /*mutual=*/true, kToken);
  // ringctl: trusts the CA, has no client certificate.
  std::shared_ptr<grpc::Channel> user = Channel(WorkerFiles(*pki_, nullptr));
  EXPECT_TRUE(Fails(Submit(user, ""), StatusCode::UNAUTHENTICATED,
                    "SubmitJob needs a bearer token"));
  EXPECT_TRUE(Fails(Submit(user, "wrong"), StatusCode::UNAUTHENTICATED,
                    "SubmitJob: the bearer token is not the coordinator's"));
  EXPECT_TRUE(Fails(Submit(user, "", nullptr, kToken),
                    StatusCode::UNAUTHENTICATED, "not \"Bearer <token>\""));
  EXPECT_TRUE(server_->coordinator()
                  .user_calls()
                  .ListJobs(v1::ListJobsRequest())
                  ->jobs()
                  .empty());

  std::string id;
  ASSERT_TRUE(Ok(Submit(user, kToken, &id)));
  ASSERT_FALSE(id.empty());
  EXPECT_TRUE(Fails(Cancel(user, "", id), StatusCode::UNAUTHENTICATED,
                    "CancelJob needs a bearer token"));
  EXPECT_TRUE(Fails(Cancel(user, std::string(kToken) + "x", id),
                    StatusCode::UNAUTHENTICATED,
                    "CancelJob: the bearer token is not the coordinator's"));
  v1::Job job;
  // Read-only calls need no token.
  ASSERT_TRUE(Ok(GetJob(user, id, &job)));
  EXPECT_NE(job.state(), v1::JOB_STATE_CANCELLED);
  ASSERT_TRUE(Ok(Cancel(user, kToken, id, &job)));
  EXPECT_EQ(job.state(), v1::JOB_STATE_CANCELLED);
}

TEST_F(SecurityTest, TokenIsCheckedWithoutTlsToo) {
  StartServer(/*tls=*/false, /*mutual=*/false, kToken);
  std::shared_ptr<grpc::Channel> user = Channel(ClientTlsFiles{});
  EXPECT_TRUE(Fails(Submit(user, ""), StatusCode::UNAUTHENTICATED,
                    "needs a bearer token"));
  EXPECT_TRUE(Fails(Submit(user, "s3cret-token-012345678X"),
                    StatusCode::UNAUTHENTICATED, "not the coordinator's"));
  std::string id;
  ASSERT_TRUE(Ok(Submit(user, kToken, &id)));
  EXPECT_TRUE(Fails(Cancel(user, "", id), StatusCode::UNAUTHENTICATED,
                    "needs a bearer token"));
  EXPECT_TRUE(Ok(Cancel(user, kToken, id)));
  // Workers authenticate by certificate, not token: insecure, they pass.
  EXPECT_TRUE(Ok(Register(user)));
}

TEST_F(SecurityTest, WithoutTokenOrTlsEverythingIsOpenAsBefore) {
  StartServer(/*tls=*/false, /*mutual=*/false, "");
  std::shared_ptr<grpc::Channel> user = Channel(ClientTlsFiles{});
  std::string id;
  ASSERT_TRUE(Ok(Submit(user, "", &id)));
  EXPECT_TRUE(Ok(Cancel(user, "", id)));
  EXPECT_TRUE(Ok(Register(user)));
}

TEST_F(SecurityTest, HealthNeedsNeitherCertificateNorToken) {
  StartServer(/*tls=*/true, /*mutual=*/true, kToken);
  auto channel = Channel(WorkerFiles(*pki_, nullptr));
  grpc::GenericStub stub(channel);
  grpc::Slice empty("");  // An empty HealthCheckRequest: service "".
  grpc::ByteBuffer request(&empty, 1);
  grpc::ByteBuffer response;
  auto ctx = ClientContext(kCallTimeout);
  grpc::Status status;
  absl::Mutex mu;
  bool done = false;
  stub.UnaryCall(ctx.get(), "/grpc.health.v1.Health/Check", grpc::StubOptions(),
                 &request, &response, [&](grpc::Status s) {
                   absl::MutexLock lock(&mu);
                   status = std::move(s);
                   done = true;
                 });
  absl::MutexLock lock(&mu);
  ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&done), kCallTimeout * 2));
  EXPECT_TRUE(Ok(status));
}

TEST_F(SecurityTest, BadTlsConfigurationFailsToStart) {
  CoordinatorServerConfig config = InProcessCoordinator::Config();
  config.tls.cert = pki_->server_cert;  // No key.
  EXPECT_FALSE(CoordinatorServer::Start(config).ok());
  config.tls.key = pki_->server_key;
  config.tls.client_ca = "/nonexistent/ca.pem";
  absl::StatusOr<std::unique_ptr<CoordinatorServer>> s =
      CoordinatorServer::Start(config);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.status().message(), "--tls_client_ca"))
      << s.status();
  config = InProcessCoordinator::Config();
  config.tls.client_ca = pki_->ca_cert;  // A client CA without TLS.
  EXPECT_FALSE(CoordinatorServer::Start(config).ok());
}

}  // namespace
}  // namespace ringleader
