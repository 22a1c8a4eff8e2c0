// The HTTP ports hold against slow clients (issue 49, point 3), in process:
// HttpServer (common/metrics_http.h) on the connection loop, with the
// connections of tests/testing/slow_clients.h opened for real beside it.
#include "common/http/connection_loop.h"

#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/metrics_http.h"
#include "gtest/gtest.h"
#include "tests/testing/slow_clients.h"
#include "tests/testing/test_pki.h"

namespace ringleader::http {
namespace {

using ::ringleader::testing::SlowClients;

const std::vector<std::string> kSources = {
    "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5",
    "127.0.0.6", "127.0.0.7", "127.0.0.8", "127.0.0.9"};

// A scrape of /metrics the way Prometheus does it, its time.
template <typename Client>
absl::Duration Scrape(Client& client, int* status) {
  const absl::Time start = absl::Now();
  httplib::Result r = client.Get("/metrics");
  *status = r ? r->status : -1;
  return absl::Now() - start;
}

std::unique_ptr<metrics::HttpServer> Serve(const metrics::Registry* r,
                                           metrics::HttpServerOptions o) {
  absl::StatusOr<std::unique_ptr<metrics::HttpServer>> s =
      metrics::HttpServer::Start("127.0.0.1:0", r, o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

TEST(ConnectionLoopTest, AThousandSlowClientsHoldNoScrapeUp) {
  metrics::Registry r;
  r.AddCounter("rl_test_total", "A counter.").Get()->Increment(7);
  auto server = Serve(&r, {});
  ASSERT_NE(server, nullptr);
  const long before = testing::ResidentBytes(::getpid());
  SlowClients slow;
  ASSERT_TRUE(slow.Open(server->port(), 1000, kSources).ok());
  slow.Trickle();
  httplib::Client client("127.0.0.1", server->port());
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  absl::Duration slowest;
  for (int i = 0; i < 20; ++i) {
    int status = 0;
    slowest = std::max(slowest, Scrape(client, &status));
    ASSERT_EQ(status, 200) << "scrape " << i;
    if (i % 5 == 4) slow.Trickle();
  }
  EXPECT_EQ(slow.StillOpen(), 1000);  // Held, not refused: under the limits.
  const LoopStats stats = server->stats();
  EXPECT_GE(stats.peak_open, 1000);
  std::cout << "20 scrapes beside 1000 slow connections: slowest " << slowest
            << "; resident memory +"
            << (testing::ResidentBytes(::getpid()) - before) / 1024 << " KiB\n";
}

TEST(ConnectionLoopTest, SlowRequestsAreCutOffAtTheirDeadline) {
  metrics::Registry r;
  metrics::HttpServerOptions o;
  o.loop.request_timeout = absl::Milliseconds(500);
  auto server = Serve(&r, o);
  ASSERT_NE(server, nullptr);
  SlowClients slow;
  ASSERT_TRUE(slow.Open(server->port(), 30, kSources).ok());
  // Trickling does not extend a deadline counted from the accept.
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (slow.StillOpen() > 0 && absl::Now() < give_up) {
    slow.Trickle();
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_EQ(slow.StillOpen(), 0);
  EXPECT_EQ(server->stats().timed_out, 30);
  EXPECT_EQ(server->stats().open, 0);
}

TEST(ConnectionLoopTest, OnePeerHoldsAtMostItsShare) {
  metrics::Registry r;
  metrics::HttpServerOptions o;
  o.loop.max_per_peer = 50;
  auto server = Serve(&r, o);
  ASSERT_NE(server, nullptr);
  SlowClients one_peer;
  ASSERT_TRUE(one_peer.Open(server->port(), 80, {"127.0.0.2"}).ok());
  // The loop closes the 30 past the share as it accepts them.
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (server->stats().refused < 30 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(server->stats().refused, 30);
  EXPECT_EQ(one_peer.StillOpen(), 50);
  // Another peer is served.
  httplib::Client client("127.0.0.1", server->port());
  int status = 0;
  Scrape(client, &status);
  EXPECT_EQ(status, 200);
}

TEST(ConnectionLoopTest, ABurstOfFortyClientsIsServedWhole) {
  metrics::Registry r;
  auto server = Serve(&r, {});
  ASSERT_NE(server, nullptr);
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 40; ++c) {
    clients.emplace_back([&] {
      httplib::Client client("127.0.0.1", server->port());
      client.set_read_timeout(10);
      for (int i = 0; i < 25; ++i) {
        httplib::Result res = client.Get("/metrics");
        if (res && res->status == 200) ++ok;
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(ok.load(), 1000);
  // The loop counts a response once its last byte is written, which the
  // client may read first: the count catches up (it was 999 once, under
  // Prescott kernels on a loaded machine).
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (server->stats().served < 1000 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));  // Polling the count.
  }
  EXPECT_EQ(server->stats().served, 1000);
}

TEST(ConnectionLoopTest, OverTlsTheSlowClientsHoldNoScrapeUpEither) {
  absl::StatusOr<testing::TestPki> pki = testing::MakeTestPki(
      absl::StrCat(::testing::TempDir(), "/http-pki"), "http");
  ASSERT_TRUE(pki.ok()) << pki.status();
  metrics::Registry r;
  metrics::HttpServerOptions o;
  o.tls_cert = pki->server_cert;
  o.tls_key = pki->server_key;
  auto server = Serve(&r, o);
  ASSERT_NE(server, nullptr);
  SlowClients slow;  // Part of a ClientHello, or none.
  ASSERT_TRUE(slow.Open(server->port(), 300, kSources, /*tls=*/true).ok());
  slow.Trickle();
  httplib::SSLClient client("127.0.0.1", server->port());
  client.set_ca_cert_path(pki->ca_cert.c_str());
  client.enable_server_certificate_verification(true);
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  for (int i = 0; i < 10; ++i) {
    int status = 0;
    Scrape(client, &status);
    ASSERT_EQ(status, 200) << "scrape " << i;
  }
  EXPECT_EQ(slow.StillOpen(), 300);
}

}  // namespace
}  // namespace ringleader::http
