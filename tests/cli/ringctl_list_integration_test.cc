// `ringctl list` against the real coordinator binary whose state holds more
// jobs than one page, and more bytes than gRPC's 4 MB limit: it follows the
// pages and prints them all, as one table or one JSON array. The state file
// is written through the StateStore beforehand (as an older coordinator
// could have left it), so the jobs may be larger than submit accepts.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "coordinator/state_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/cli/coordinator_process.h"
#include "tests/testing/process.h"

namespace ringleader {
namespace {

using testing::CoordinatorProcess;
using testing::ProcessResult;

constexpr int kJobs = 60;                // More than the default page of 50.
constexpr size_t kJobBytes = 100 << 10;  // 6 MB in all.

v1::Job LargeFinishedJob(int n) {
  v1::Job job;
  job.set_job_id(absl::StrCat("big-", n));
  job.mutable_spec()->set_name("big");
  job.mutable_spec()->set_epochs(1);
  job.mutable_spec()->set_checkpoint_dir("/c/" + std::string(kJobBytes, 'c'));
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  job.set_create_time_ms(1000 + n);
  job.set_update_time_ms(2000 + n);
  return job;
}

class RingctlListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string state = testing::TestTempDir() + "/big-state.db";
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::remove((state + suffix).c_str());
    }
    {
      auto store = StateStore::Open(state);
      ASSERT_TRUE(store.ok()) << store.status();
      for (int n = 1; n <= kJobs; ++n) {
        ASSERT_TRUE((*store)->SaveJob(LargeFinishedJob(n)).ok());
      }
    }
    CoordinatorProcess::Options options;
    // Given after the fixture's own --state: the last one wins.
    options.extra_flags = {"--state=" + state, "--retain_finished_jobs=0"};
    auto c = CoordinatorProcess::Start(options);
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = *std::move(c);
  }

  ProcessResult Ringctl(std::vector<std::string> args) {
    args.insert(args.begin(), {testing::RunfilePath("cli/ringctl"),
                               "--coordinator=" + coordinator_->address()});
    auto r = testing::RunProcess(args, absl::Seconds(30));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : ProcessResult{};
  }

  std::unique_ptr<CoordinatorProcess> coordinator_;
};

TEST_F(RingctlListTest, ListFollowsEveryPage) {
  const ProcessResult text = Ringctl({"list"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::vector<std::string> lines =
      absl::StrSplit(text.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), static_cast<size_t>(kJobs + 1));  // And a header.
  EXPECT_THAT(lines[1], ::testing::StartsWith("big-1 "));
  EXPECT_THAT(lines[kJobs], ::testing::StartsWith("big-60 "));

  const ProcessResult json = Ringctl({"list", "--output=json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["jobs"].size(), static_cast<size_t>(kJobs));
  // Summaries: the heavy spec fields stay on the coordinator.
  EXPECT_FALSE(j["jobs"][0]["spec"].contains("checkpointDir"));

  ASSERT_EQ(Ringctl({"delete", "big-7"}).exit_code, 0);
  const ProcessResult after = Ringctl({"list", "--state=succeeded"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_THAT(after.out, ::testing::Not(::testing::HasSubstr("big-7 ")));
  EXPECT_EQ(std::count(after.out.begin(), after.out.end(), '\n'), kJobs);
}

}  // namespace
}  // namespace ringleader
