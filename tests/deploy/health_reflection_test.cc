// The real coordinator binary serves grpc.health.v1.Health (SERVING once
// recovered, NOT_SERVING from shutdown on) and server reflection listing
// ringleader.v1's services, to clients built from the standard protos.
#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"

namespace ringleader::testing {
namespace {

using ::grpc::health::v1::HealthCheckRequest;
using ::grpc::health::v1::HealthCheckResponse;
using ::grpc::reflection::v1alpha::ServerReflectionRequest;
using ::grpc::reflection::v1alpha::ServerReflectionResponse;
using ::testing::Contains;
using ::testing::IsSupersetOf;

constexpr absl::Duration kTimeout = absl::Seconds(60);

class CoordinatorProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TestTempDir() + "/" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    RunProcess({"/bin/rm", "-rf", dir_}, absl::Seconds(30)).IgnoreError();
    RunProcess({"/bin/mkdir", "-p", dir_}, absl::Seconds(30)).IgnoreError();
    ProcessOptions o;
    o.env = {{"NOTIFY_SOCKET", std::nullopt}};
    o.stderr_path = dir_ + "/err";
    absl::StatusOr<std::unique_ptr<Subprocess>> p = Subprocess::Start(
        {RunfilePath("coordinator/ringleader-coordinator"),
         "--listen=127.0.0.1:0", "--state=" + dir_ + "/state.db",
         "--port_file=" + dir_ + "/port"},
        o);
    ASSERT_TRUE(p.ok()) << p.status();
    process_ = *std::move(p);
    absl::StatusOr<int> port =
        WaitForPortFile(dir_ + "/port", kTimeout, process_.get());
    ASSERT_TRUE(port.ok()) << port.status() << ReadFileOrEmpty(dir_ + "/err");
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", *port),
                                   grpc::InsecureChannelCredentials());
  }

  static void Deadline(grpc::ClientContext* ctx) {
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::seconds(20));
  }

  grpc::Status Check(const std::string& service, HealthCheckResponse* resp) {
    grpc::ClientContext ctx;
    Deadline(&ctx);
    HealthCheckRequest req;
    req.set_service(service);
    return grpc::health::v1::Health::NewStub(channel_)->Check(&ctx, req, resp);
  }

  // One reflection request on a fresh stream.
  ServerReflectionResponse Reflect(const ServerReflectionRequest& req) {
    auto stub = grpc::reflection::v1alpha::ServerReflection::NewStub(channel_);
    grpc::ClientContext ctx;
    Deadline(&ctx);
    auto stream = stub->ServerReflectionInfo(&ctx);
    ServerReflectionResponse resp;
    EXPECT_TRUE(stream->Write(req));
    stream->WritesDone();
    EXPECT_TRUE(stream->Read(&resp));
    ServerReflectionResponse extra;
    EXPECT_FALSE(stream->Read(&extra));
    grpc::Status s = stream->Finish();
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp;
  }

  std::string dir_;
  std::unique_ptr<Subprocess> process_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(CoordinatorProcessTest, HealthIsServingForServerAndServices) {
  for (const std::string service :
       {"", "ringleader.v1.WorkerService", "ringleader.v1.UserService"}) {
    HealthCheckResponse resp;
    grpc::Status s = Check(service, &resp);
    ASSERT_TRUE(s.ok()) << service << ": " << s.error_message();
    EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING) << service;
  }
  HealthCheckResponse resp;
  EXPECT_EQ(Check("no.such.Service", &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(CoordinatorProcessTest, HealthTurnsNotServingOnShutdown) {
  auto stub = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext ctx;
  Deadline(&ctx);
  HealthCheckRequest req;
  req.set_service("ringleader.v1.WorkerService");
  auto watch = stub->Watch(&ctx, req);
  HealthCheckResponse resp;
  ASSERT_TRUE(watch->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);
  process_->Kill(SIGTERM);
  // Before the server goes away, watchers are told NOT_SERVING.
  ASSERT_TRUE(watch->Read(&resp)) << ReadFileOrEmpty(dir_ + "/err");
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
  ctx.TryCancel();
  watch->Finish().IgnoreError();
  EXPECT_EQ(process_->Wait(kTimeout), 0);
}

TEST_F(CoordinatorProcessTest, ReflectionListsTheServices) {
  ServerReflectionRequest req;
  req.set_list_services("");
  ServerReflectionResponse resp = Reflect(req);
  ASSERT_TRUE(resp.has_list_services_response())
      << resp.error_response().error_message();
  std::vector<std::string> names;
  for (const auto& s : resp.list_services_response().service()) {
    names.push_back(s.name());
  }
  EXPECT_THAT(names, IsSupersetOf({"ringleader.v1.WorkerService",
                                   "ringleader.v1.UserService",
                                   "grpc.health.v1.Health"}));
}

TEST_F(CoordinatorProcessTest, ReflectionDescribesTheServices) {
  struct Want {
    std::string symbol, file, method;
  };
  for (const Want& want :
       {Want{"ringleader.v1.WorkerService",
             "ringleader/v1/worker_service.proto", "Register"},
        Want{"ringleader.v1.UserService", "ringleader/v1/user_service.proto",
             "SubmitJob"}}) {
    ServerReflectionRequest req;
    req.set_file_containing_symbol(want.symbol);
    ServerReflectionResponse resp = Reflect(req);
    ASSERT_TRUE(resp.has_file_descriptor_response())
        << want.symbol << ": " << resp.error_response().error_message();
    bool found = false;
    for (const std::string& bytes :
         resp.file_descriptor_response().file_descriptor_proto()) {
      google::protobuf::FileDescriptorProto file;
      ASSERT_TRUE(file.ParseFromString(bytes));
      if (file.name() != want.file) continue;
      found = true;
      ASSERT_EQ(file.package(), "ringleader.v1");
      std::vector<std::string> methods;
      for (const auto& service : file.service()) {
        for (const auto& m : service.method()) methods.push_back(m.name());
      }
      EXPECT_THAT(methods, Contains(want.method)) << want.file;
    }
    EXPECT_TRUE(found) << want.symbol << " not in " << want.file;
  }
  ServerReflectionRequest unknown;
  unknown.set_file_containing_symbol("ringleader.v1.NoSuchService");
  EXPECT_EQ(Reflect(unknown).error_response().error_code(),
            static_cast<int>(grpc::StatusCode::NOT_FOUND));
}

}  // namespace
}  // namespace ringleader::testing
