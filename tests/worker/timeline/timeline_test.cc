#include "worker/timeline/timeline.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ringleader {
namespace {

using nlohmann::json;

std::string TempDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  std::string dir =
      std::string(t != nullptr ? t : "/tmp") + "/timeline_" +
      std::to_string(getpid()) + "_" +
      ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::remove_all(dir);
  return dir;
}

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());  // Throws (fails the test) if malformed.
}

// The complete ("X") events of a parsed trace.
std::vector<json> Complete(const json& doc) {
  std::vector<json> out;
  for (const json& e : doc.at("traceEvents")) {
    if (e.at("ph") == "X") out.push_back(e);
  }
  return out;
}

TEST(TimelineTest, PathForNamesJobAndRank) {
  EXPECT_EQ(Timeline::PathFor("/tl", "job-7", 3), "/tl/job-7-rank3.trace.json");
  EXPECT_EQ(Timeline::PathFor("/tl/", "j", 0), "/tl/j-rank0.trace.json");
}

TEST(TimelineTest, WritesChromeTraceWithTracksAndArgs) {
  const std::string dir = TempDir();
  const std::string path = Timeline::PathFor(dir + "/sub", "job-1", 2);
  Timeline t(path, 2, 0);
  ASSERT_TRUE(t.enabled());
  t.SetMetadata("job_id", "job-1");
  t.SetStep(5);
  t.Record("forward", Timeline::Track::kCompute, 1000, 1250, t.step());
  t.Record("allreduce", Timeline::Track::kComm, 1100, 1400, t.step(), 0, 4096);
  ASSERT_TRUE(t.Flush().ok());
  // The trace alone: no temporary file of any name is left beside it.
  for (const auto& e : std::filesystem::directory_iterator(dir + "/sub")) {
    EXPECT_EQ(e.path().string(), path);
  }

  const json doc = ReadJson(path);
  EXPECT_EQ(doc.at("otherData").at("job_id"), "job-1");
  EXPECT_EQ(doc.at("otherData").at("rank"), 2);
  // Track names as metadata, so Perfetto labels them.
  std::map<int, std::string> threads;
  std::string process;
  for (const json& e : doc.at("traceEvents")) {
    if (e.at("ph") != "M") continue;
    EXPECT_EQ(e.at("pid"), 2);
    if (e.at("name") == "thread_name") {
      threads[e.at("tid").get<int>()] = e.at("args").at("name");
    }
    if (e.at("name") == "process_name") process = e.at("args").at("name");
  }
  EXPECT_EQ(process, "rank 2");
  EXPECT_EQ(threads[1], "compute");
  EXPECT_EQ(threads[2], "communication");

  const std::vector<json> events = Complete(doc);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].at("name"), "forward");
  EXPECT_EQ(events[0].at("ts"), 1000);
  EXPECT_EQ(events[0].at("dur"), 250);
  EXPECT_EQ(events[0].at("pid"), 2);
  EXPECT_EQ(events[0].at("tid"), 1);
  EXPECT_EQ(events[0].at("args").at("step"), 5);
  EXPECT_FALSE(events[0].at("args").contains("bucket"));
  EXPECT_EQ(events[1].at("name"), "allreduce");
  EXPECT_EQ(events[1].at("tid"), 2);
  EXPECT_EQ(events[1].at("dur"), 300);
  EXPECT_EQ(events[1].at("args").at("bucket"), 0);
  EXPECT_EQ(events[1].at("args").at("bytes"), 4096);
}

TEST(TimelineTest, DisabledRecordsAndWritesNothing) {
  const std::string dir = TempDir();
  Timeline t("", 0, 0);
  EXPECT_FALSE(t.enabled());
  t.SetStep(1);
  t.Record("forward", Timeline::Track::kCompute, 0, 10, 1);
  { TimelineSpan span(&t, "backward"); }
  EXPECT_TRUE(t.Events().empty());
  EXPECT_TRUE(t.Flush().ok());
  EXPECT_FALSE(std::filesystem::exists(dir));
  TimelineSpan null_span(nullptr, "forward");  // A null timeline is fine too.
}

TEST(TimelineTest, KeepsOnlyMaxStepsFromTheFirstStepSeen) {
  Timeline t("/unused/path.json", 0, 3);
  // Events before any step are not kept.
  t.Record("data_wait", Timeline::Track::kCompute, 0, 1, 0);
  for (int64_t step = 11; step <= 20; ++step) {
    t.SetStep(step);
    TimelineSpan span(&t, "optimizer");
  }
  const std::vector<Timeline::Event> events = t.Events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].step, 11);
  EXPECT_EQ(events[2].step, 13);
  EXPECT_EQ(events[0].name, "optimizer");
  EXPECT_GE(events[0].dur_us, 0);
}

TEST(TimelineTest, ConcurrentRecordsAreAllKept) {
  const std::string dir = TempDir();
  Timeline t(dir + "/t.json", 0, 0);
  t.SetStep(1);
  constexpr int kThreads = 4, kPerThread = 500;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&t, i] {
      for (int j = 0; j < kPerThread; ++j) {
        t.Record("allreduce", Timeline::Track::kComm, j, j + 1, 1, i, j);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  ASSERT_TRUE(t.Flush().ok());
  EXPECT_EQ(Complete(ReadJson(dir + "/t.json")).size(),
            static_cast<size_t>(kThreads * kPerThread));
}

TEST(TimelineTest, FlushReplacesTheFileAndReportsErrors) {
  const std::string dir = TempDir();
  const std::string path = dir + "/t.json";
  Timeline t(path, 0, 0);
  t.SetStep(1);
  t.Record("forward", Timeline::Track::kCompute, 0, 1, 1);
  ASSERT_TRUE(t.Flush().ok());
  t.Record("backward", Timeline::Track::kCompute, 1, 2, 1);
  ASSERT_TRUE(t.Flush().ok());
  EXPECT_EQ(Complete(ReadJson(path)).size(), 2u);

  // A directory where the file should be: the rename fails, and says so.
  Timeline bad(dir, 0, 0);
  const absl::Status s = bad.Flush();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find(dir), std::string::npos) << s;
}

}  // namespace
}  // namespace ringleader
