// The dashboard served by a real coordinator (in process) over HTTPS with
// the API's certificate and token: who may read it, that it only reads,
// that /metrics stays beside it, and that a submitted job shows.
#include <httplib.h>

#include <memory>
#include <string>

#include "coordinator/server/coordinator_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/in_process_coordinator.h"
#include "tests/testing/job_specs.h"
#include "tests/testing/test_pki.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;

constexpr char kToken[] = "dashboard-s3cret";

class DashboardServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<testing::TestPki> pki = testing::MakeTestPki(
        absl::StrCat(::testing::TempDir(), "/dashboard-pki"), "dash");
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *pki;
    CoordinatorServerConfig config = testing::InProcessCoordinator::Config();
    config.metrics_listen = "127.0.0.1:0";
    config.dashboard = true;
    config.tls.cert = pki_.server_cert;
    config.tls.key = pki_.server_key;
    config.auth_token = kToken;
    auto c = testing::InProcessCoordinator::Start(config);
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = *std::move(c);
  }

  std::unique_ptr<httplib::SSLClient> Client() {
    auto client = std::make_unique<httplib::SSLClient>(
        "127.0.0.1", coordinator_->server().metrics_port());
    client->set_ca_cert_path(pki_.ca_cert.c_str());
    client->enable_server_certificate_verification(true);
    client->set_connection_timeout(10);
    client->set_read_timeout(10);
    return client;
  }

  testing::TestPki pki_;
  std::unique_ptr<testing::InProcessCoordinator> coordinator_;
};

TEST_F(DashboardServerTest, PagesNeedTheToken) {
  auto client = Client();
  httplib::Result res = client->Get("/jobs");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 401);
  EXPECT_THAT(res->body, HasSubstr("?token="));
  res = client->Get("/jobs", {{"Authorization", "Bearer wrong"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = client->Get("/jobs",
                    {{"Authorization", absl::StrCat("Bearer ", kToken)}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->body, HasSubstr("<h1>Jobs</h1>"));
}

TEST_F(DashboardServerTest, TheQueryTokenBecomesASecureCookie) {
  auto client = Client();
  httplib::Result res = client->Get(absl::StrCat("/workers?token=", kToken));
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 303);
  EXPECT_EQ(res->get_header_value("Location"), "/workers");
  const std::string cookie = res->get_header_value("Set-Cookie");
  EXPECT_THAT(cookie, HasSubstr("HttpOnly"));
  EXPECT_THAT(cookie, HasSubstr("Secure"));
  res =
      client->Get("/workers", {{"Cookie", cookie.substr(0, cookie.find(';'))}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->body, HasSubstr("<h1>Workers</h1>"));
  EXPECT_EQ(res->get_header_value("Cache-Control"), "no-store");
}

TEST_F(DashboardServerTest, ASubmittedJobShowsOnItsPageAndTheList) {
  v1::SubmitJobRequest submit;
  *submit.mutable_spec() = testing::MinimalJobSpec("dash", 2, 2);
  // Through the calls the service answers with: the test's gRPC channel has
  // no TLS.
  absl::StatusOr<v1::SubmitJobResponse> submitted =
      coordinator_->server().coordinator().user_calls().SubmitJob(submit);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  auto client = Client();
  const httplib::Headers auth = {
      {"Authorization", absl::StrCat("Bearer ", kToken)}};
  httplib::Result res = client->Get("/jobs", auth);
  ASSERT_TRUE(res);
  EXPECT_THAT(res->body, HasSubstr(absl::StrCat("href=\"/jobs/",
                                                submitted->job_id(), "\"")));
  res = client->Get(absl::StrCat("/jobs/", submitted->job_id()), auth);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->body, HasSubstr("data-state=\"PENDING\""));
  EXPECT_THAT(res->body, HasSubstr("no points yet"));
  res = client->Get("/jobs/no-such-job-1", auth);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
}

TEST_F(DashboardServerTest, ItOnlyReadsAndMetricsStayBesideIt) {
  auto client = Client();
  const httplib::Headers auth = {
      {"Authorization", absl::StrCat("Bearer ", kToken)}};
  httplib::Result res = client->Post("/jobs", auth, "", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_GE(res->status, 400);
  res = client->Delete("/jobs/x-1", auth);
  ASSERT_TRUE(res);
  EXPECT_GE(res->status, 400);
  res = client->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->body, HasSubstr("ringleader_workers_alive"));
}

TEST(DashboardConfigTest, TheDashboardNeedsTheMetricsServer) {
  CoordinatorServerConfig config = testing::InProcessCoordinator::Config();
  config.dashboard = true;
  auto c = testing::InProcessCoordinator::Start(config);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("--metrics_listen"));
}

TEST(DashboardConfigTest, AnUnreadableCertificateIsRefused) {
  CoordinatorServerConfig config = testing::InProcessCoordinator::Config();
  config.metrics_listen = "127.0.0.1:0";
  config.dashboard = true;
  config.tls.cert = "/nonexistent/cert.pem";
  config.tls.key = "/nonexistent/key.pem";
  // The gRPC side refuses it first or the HTTPS side does: either way the
  // coordinator does not start with a dashboard it cannot secure.
  EXPECT_FALSE(testing::InProcessCoordinator::Start(config).ok());
}

}  // namespace
}  // namespace ringleader
