#include "common/metrics_http.h"

#include <httplib.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader::metrics {
namespace {

using ::testing::HasSubstr;

TEST(MetricsHttpTest, ServesRegistryOnAnOsPort) {
  Registry r;
  Counter* c = r.AddCounter("rl_scrapes_total", "Test counter.").Get();
  c->Increment(41);
  absl::StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Start("127.0.0.1:0", &r);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_GT((*server)->port(), 0);

  httplib::Client client("127.0.0.1", (*server)->port());
  client.set_connection_timeout(10);
  client.set_read_timeout(10);
  httplib::Result res = client.Get("/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), kContentType);
  EXPECT_THAT(res->body, HasSubstr("# TYPE rl_scrapes_total counter\n"
                                   "rl_scrapes_total 41\n"));
  c->Increment();  // Every scrape renders anew.
  res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_THAT(res->body, HasSubstr("rl_scrapes_total 42\n"));
  res = client.Get("/other");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
}

TEST(MetricsHttpTest, RejectsBadAddressAndBusyPort) {
  Registry r;
  EXPECT_EQ(HttpServer::Start("nope", &r).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HttpServer::Start("127.0.0.1:70000", &r).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::unique_ptr<HttpServer>> first =
      HttpServer::Start("127.0.0.1:0", &r);
  ASSERT_TRUE(first.ok());
  absl::StatusOr<std::unique_ptr<HttpServer>> second =
      HttpServer::Start("127.0.0.1:" + std::to_string((*first)->port()), &r);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

TEST(MetricsHttpTest, StopsRightAfterStart) {
  Registry r;
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<std::unique_ptr<HttpServer>> s =
        HttpServer::Start("127.0.0.1:0", &r);
    ASSERT_TRUE(s.ok());
  }  // Each destructor returns: the loop was stopped.
}

}  // namespace
}  // namespace ringleader::metrics
