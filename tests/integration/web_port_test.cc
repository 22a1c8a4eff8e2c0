// Issue 49, point 3: the web port holds. A real coordinator (dashboard and
// /metrics) and a real worker (/metrics), each beside slow clients opened
// for real (tests/testing/slow_clients.h: idle, half-sent and trickling
// connections from eight local addresses): every page still answers, and
// during a burst of 1,000 page loads from 40 clients a scrape still does.
// Before (httplib's pool of two threads, each held by an unfinished
// request), two such connections stopped the port. The latencies are
// printed (bench/README.md, "The web port beside slow clients").
#include <httplib.h>

#include <atomic>
#include <iostream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/testing/job_specs.h"
#include "tests/testing/slow_clients.h"

namespace ringleader::testing {
namespace {

const std::vector<std::string> kSources = {
    "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5",
    "127.0.0.6", "127.0.0.7", "127.0.0.8", "127.0.0.9"};

// GETs `path` with a 5 s limit (a port held by slow clients would not
// answer at all); its status, and the slowest time in `slowest`.
int Load(int port, const std::string& path, absl::Duration* slowest) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  const absl::Time start = absl::Now();
  httplib::Result r = client.Get(path);
  *slowest = std::max(*slowest, absl::Now() - start);
  return r ? r->status : -1;
}

absl::StatusOr<int> PortOf(const std::string& file, Subprocess* p) {
  return WaitForPortFile(file, absl::Seconds(60), p);
}

TEST(WebPortTest, PagesAndScrapesAnswerBesideSlowClientsAndABurst) {
  auto cluster = Cluster::Start(
      "web-port", {"--dashboard", "--metrics_listen=127.0.0.1:0",
                   absl::StrCat("--metrics_port_file=", TestTempDir(),
                                "/web-port-coordinator.port")});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Subprocess* coordinator = (*cluster)->coordinator();
  absl::StatusOr<int> port =
      PortOf(TestTempDir() + "/web-port-coordinator.port", coordinator);
  ASSERT_TRUE(port.ok()) << port.status();
  const std::string worker_port_file = TestTempDir() + "/web-port-worker.port";
  auto worker =
      (*cluster)->StartWorker({"--metrics_listen=127.0.0.1:0",
                               "--metrics_port_file=" + worker_port_file});
  ASSERT_TRUE(worker.ok()) << worker.status();
  absl::StatusOr<int> worker_port = PortOf(worker_port_file, *worker);
  ASSERT_TRUE(worker_port.ok()) << worker_port.status();
  v1::JobSpec spec = MinimalJobSpec("web", 1, 1);
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE((*cluster)->WaitForEnd(*job, absl::Minutes(2)).ok());

  const long rss_before = ResidentBytes(coordinator->pid());
  SlowClients slow, slow_worker;
  ASSERT_TRUE(slow.Open(*port, 1000, kSources).ok());
  ASSERT_TRUE(slow_worker.Open(*worker_port, 300, kSources).ok());
  slow.Trickle();
  const std::vector<std::string> pages = {"/metrics", "/jobs", "/jobs/" + *job,
                                          "/workers"};
  absl::Duration slowest;
  for (int round = 0; round < 5; ++round) {
    for (const std::string& page : pages) {
      EXPECT_EQ(Load(*port, page, &slowest), 200) << page;
    }
    EXPECT_EQ(Load(*worker_port, "/metrics", &slowest), 200) << "worker";
    slow.Trickle();
    slow_worker.Trickle();
  }
  EXPECT_EQ(slow.StillOpen(), 1000);
  EXPECT_EQ(slow_worker.StillOpen(), 300);
  const long rss_slow = ResidentBytes(coordinator->pid());

  // The burst: 40 clients, 25 loads each over the four pages, and a
  // scrape beside them every 20 ms.
  std::atomic<int> ok{0};
  std::atomic<bool> burst_done{false};
  std::vector<std::thread> clients;
  for (int c = 0; c < 40; ++c) {
    clients.emplace_back([&, c] {
      absl::Duration ignored;
      for (int i = 0; i < 25; ++i) {
        if (Load(*port, pages[(c + i) % pages.size()], &ignored) == 200) ++ok;
      }
    });
  }
  absl::Duration slowest_scrape;
  int scrapes = 0, scrapes_ok = 0;
  std::thread prober([&] {
    // Bounded by the burst (at most 40 x 25 loads of 5 s each).
    while (!burst_done) {
      scrapes_ok += Load(*port, "/metrics", &slowest_scrape) == 200;
      ++scrapes;
      absl::SleepFor(absl::Milliseconds(20));
    }
  });
  for (std::thread& t : clients) t.join();
  burst_done = true;
  prober.join();
  EXPECT_EQ(ok.load(), 1000);
  EXPECT_EQ(scrapes_ok, scrapes);
  std::cout << "beside 1000 slow connections (coordinator) and 300 (worker): "
            << "slowest page " << slowest << "; coordinator resident memory "
            << rss_before / 1024 << " KiB -> " << rss_slow / 1024
            << " KiB; burst of 1000 loads from 40 clients: " << ok
            << " answered, " << scrapes << " scrapes beside it, slowest "
            << slowest_scrape << "\n";
}

}  // namespace
}  // namespace ringleader::testing
