// Issue 5 (6): with JobSpec.timeline_dir set, real worker processes each
// write a Chrome trace of their rank: per step a data wait, forward, backward
// and optimizer step on the compute track, one all-reduce per gradient bucket
// on the communication track, some launched while backward still runs; and
// ranks report their step time.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/cluster.h"
#include "worker/ddp/bucket_plan.h"

namespace ringleader::testing {
namespace {

using nlohmann::json;

constexpr int kWorld = 2;
constexpr int kTrain = 320;
constexpr int kBatch = 16;
constexpr int kSteps = kTrain / (kBatch * kWorld);  // One epoch.

v1::JobSpec Spec(const std::string& timeline_dir) {
  v1::JobSpec s;
  s.set_name("timeline");
  s.mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  s.mutable_model()->add_hidden_sizes(48);
  s.mutable_model()->add_hidden_sizes(24);
  s.mutable_dataset()->set_format(v1::DATASET_FORMAT_SYNTHETIC);
  s.mutable_dataset()->set_synthetic_train_size(kTrain);
  s.mutable_dataset()->set_synthetic_test_size(32);
  s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  s.mutable_optimizer()->set_learning_rate(0.05);
  s.set_epochs(1);
  s.set_batch_size(kBatch);
  s.set_min_workers(kWorld);
  s.set_max_workers(kWorld);
  s.set_seed(7);
  s.set_progress_every_steps(2);
  s.set_progress_min_interval_ms(
      1);  // Reports from every rank however short the run.
  // Small buckets: several all-reduces per step, launched during backward.
  s.mutable_ddp()->set_first_bucket_bytes(1024);
  s.mutable_ddp()->set_bucket_cap_bytes(2048);
  s.set_timeline_dir(timeline_dir);
  return s;
}

// The buckets the reducer makes of this MLP's parameters (784-48-24-10,
// each layer's weight then bias, float32).
size_t ExpectedBuckets() {
  const std::vector<size_t> numels = {784 * 48, 48, 48 * 24, 24, 24 * 10, 10};
  return PlanBuckets(numels, 4, 1024, 2048).buckets.size();
}

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

TEST(TimelineIntegrationTest, EveryRankWritesAParsableTraceWithOverlap) {
  const size_t buckets = ExpectedBuckets();
  ASSERT_GE(buckets, 3u);
  const std::string dir = FreshDir("timelines");
  auto cluster = Cluster::Start("timeline");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto job = (*cluster)->Submit(Spec(dir));
  ASSERT_TRUE(job.ok()) << job.status();
  for (int i = 0; i < kWorld; ++i) {
    ASSERT_TRUE((*cluster)->StartWorker().ok());
  }
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(3));
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();

  // Every rank reported a step time.
  ASSERT_EQ(done->progress().ranks_size(), kWorld);
  for (const v1::RankProgress& r : done->progress().ranks()) {
    EXPECT_GT(r.step_time_ms(), 0) << "rank " << r.rank();
  }

  for (int rank = 0; rank < kWorld; ++rank) {
    SCOPED_TRACE(rank);
    const std::string path =
        dir + "/" + *job + "-rank" + std::to_string(rank) + ".trace.json";
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    const json doc = ReadJson(path);
    EXPECT_EQ(doc.at("otherData").at("job_id"), *job);

    // step -> name -> count, and each step's backward and all-reduces.
    std::map<int64_t, std::map<std::string, int>> counts;
    std::map<int64_t, std::multiset<int64_t>> bucket_ids;
    std::map<int64_t, std::pair<int64_t, int64_t>> backward;  // ts, end
    std::map<int64_t, std::vector<int64_t>> allreduce_starts;
    for (const json& e : doc.at("traceEvents")) {
      if (e.at("ph") != "X") continue;
      EXPECT_EQ(e.at("pid"), rank);
      EXPECT_GE(e.at("dur").get<int64_t>(), 0);
      const std::string name = e.at("name");
      const int64_t step = e.at("args").at("step");
      const int64_t ts = e.at("ts");
      counts[step][name]++;
      if (name == "allreduce") {
        EXPECT_EQ(e.at("tid"), 2) << "all-reduces on the communication track";
        EXPECT_GT(e.at("args").at("bytes").get<int64_t>(), 0);
        bucket_ids[step].insert(e.at("args").at("bucket").get<int64_t>());
        allreduce_starts[step].push_back(ts);
      } else {
        EXPECT_EQ(e.at("tid"), 1) << name << " on the compute track";
      }
      if (name == "backward") {
        backward[step] = {ts, ts + e.at("dur").get<int64_t>()};
      }
    }
    ASSERT_EQ(counts.size(), static_cast<size_t>(kSteps));
    std::multiset<int64_t> all_buckets;
    for (size_t b = 0; b < buckets; ++b) all_buckets.insert(b);
    int overlapped_steps = 0;
    for (int64_t step = 1; step <= kSteps; ++step) {
      SCOPED_TRACE(step);
      for (const char* name : {"data_wait", "forward", "backward",
                               "allreduce_wait", "optimizer"}) {
        EXPECT_EQ(counts[step][name], 1) << name;
      }
      EXPECT_EQ(counts[step]["allreduce"], static_cast<int>(buckets));
      EXPECT_EQ(bucket_ids[step], all_buckets);
      for (int64_t start : allreduce_starts[step]) {
        if (start < backward[step].second) {
          ++overlapped_steps;
          break;
        }
      }
    }
    // At least one bucket's all-reduce began while backward was running.
    EXPECT_GE(overlapped_steps, 1);
  }
}

}  // namespace
}  // namespace ringleader::testing
