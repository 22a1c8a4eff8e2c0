#include "coordinator/state_store.h"

#include <cstdlib>
#include <fstream>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::remove(path.c_str());
  std::remove((path + "-wal").c_str());
  std::remove((path + "-shm").c_str());
  return path;
}

v1::Job MakeJob(const std::string& id, v1::JobState state) {
  v1::Job job;
  job.set_job_id(id);
  job.mutable_spec()->set_name("mnist");
  job.set_state(state);
  job.set_generation(4);
  return job;
}

TEST(StateStoreTest, JobsAndCheckpointsSurviveReopen) {
  const std::string path = TempPath("state.db");
  {
    auto store = StateStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ(*(*store)->NextJobSequence(), 1);
    ASSERT_TRUE(
        (*store)->SaveJob(MakeJob("mnist-1", v1::JOB_STATE_RUNNING)).ok());
    ASSERT_TRUE(
        (*store)->SaveJob(MakeJob("mnist-2", v1::JOB_STATE_PENDING)).ok());
    // Upsert keeps creation order.
    ASSERT_TRUE(
        (*store)->SaveJob(MakeJob("mnist-1", v1::JOB_STATE_SUCCEEDED)).ok());
    v1::CheckpointRecord c;
    c.set_step(100);
    c.set_epoch_sample_offset(6400);
    c.set_path("/ckpt/a");
    EXPECT_EQ(*(*store)->AddCheckpoint("mnist-1", "mnist", c), 1);
    c.set_step(200);
    EXPECT_EQ(*(*store)->AddCheckpoint("mnist-1", "mnist", c), 2);
  }
  auto store = StateStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto jobs = (*store)->LoadJobs();
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].job_id(), "mnist-1");
  EXPECT_EQ((*jobs)[0].state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ((*jobs)[0].generation(), 4);
  EXPECT_EQ(*(*store)->NextJobSequence(), 3);
  auto latest = (*store)->LatestCheckpoint("mnist");
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->step(), 200);
  EXPECT_EQ((*latest)->checkpoint_id(), 2);
  EXPECT_FALSE((*(*store)->LatestCheckpoint("other")).has_value());
}

TEST(StateStoreTest, GarbageFileIsAClearError) {
  const std::string path = TempPath("garbage.db");
  std::ofstream(path) << std::string(8192, 'x');
  auto store = StateStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find(path), std::string::npos);
}

TEST(StateStoreTest, UnopenablePathIsAClearError) {
  auto store = StateStore::Open("/nonexistent-dir/x/state.db");
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(absl::IsUnavailable(store.status()));
}

TEST(StateStoreTest, CorruptRowIsDataLossNotSilence) {
  const std::string path = TempPath("corrupt.db");
  {
    auto store = StateStore::Open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(
        (*store)->SaveJob(MakeJob("mnist-1", v1::JOB_STATE_RUNNING)).ok());
  }
  // Another writer damages the row (what a torn or foreign write would do).
  {
    auto store = StateStore::Open(path);
    ASSERT_TRUE(store.ok());
  }
  std::string cmd = "sqlite3 --version >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    GTEST_SKIP() << "sqlite3 CLI not installed; corruption injection skipped";
  }
  std::string damage = "sqlite3 '" + path +
                       "' \"UPDATE jobs SET job = x'ffffffff' WHERE "
                       "job_id='mnist-1'\"";
  ASSERT_EQ(std::system(damage.c_str()), 0);
  auto store = StateStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto jobs = (*store)->LoadJobs();
  ASSERT_FALSE(jobs.ok());
  EXPECT_TRUE(absl::IsDataLoss(jobs.status()));
  EXPECT_NE(jobs.status().message().find("mnist-1"), std::string::npos);
}

}  // namespace
}  // namespace ringleader
