#include "coordinator/state_store.h"

#include <sqlite3.h>

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

TEST(StateStoreTest, DeleteJobForgetsItAndItsGenerationButNotItsId) {
  const std::string path = TempPath("delete.db");
  {
    auto store = StateStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    for (const char* id : {"mnist-1", "mnist-2", "mnist-3"}) {
      ASSERT_TRUE((*store)->SaveJob(MakeJob(id, v1::JOB_STATE_FAILED)).ok());
    }
    v1::GenerationRecord g;
    g.set_job_id("mnist-3");
    g.set_number(4);
    ASSERT_TRUE((*store)->SaveGeneration(g).ok());
    ASSERT_TRUE((*store)->AddCheckpoint("mnist-3", "mnist", {}).ok());
    ASSERT_TRUE((*store)->DeleteJob("mnist-3").ok());
    ASSERT_TRUE((*store)->DeleteJob("mnist-1").ok());
    EXPECT_TRUE((*store)->DeleteJob("never-was-1").ok());
    // The newest job is gone, yet its number is not handed out again.
    EXPECT_EQ(*(*store)->NextJobSequence(), 4);
  }
  auto store = StateStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  auto jobs = (*store)->LoadJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].job_id(), "mnist-2");
  EXPECT_TRUE((*store)->LoadGenerations()->empty());
  EXPECT_EQ(*(*store)->NextJobSequence(), 4);
  // The name's checkpoints stay for a job that resumes.
  EXPECT_TRUE((*(*store)->LatestCheckpoint("mnist")).has_value());
}

// The coordinator saves a formed generation outside its lock: an older
// generation's save that arrives after a newer one's leaves the newer one.
TEST(StateStoreTest, AnOlderGenerationNeverReplacesANewerOne) {
  auto store = StateStore::Open(TempPath("generations.db"));
  ASSERT_TRUE(store.ok()) << store.status();
  v1::GenerationRecord g;
  g.set_job_id("mnist-1");
  for (int64_t number : {3, 5, 4}) {
    g.set_number(number);
    ASSERT_TRUE((*store)->SaveGeneration(g).ok());
  }
  g.set_number(5);
  g.add_members()->set_worker_id("w-resaved");
  ASSERT_TRUE((*store)->SaveGeneration(g).ok());
  auto generations = (*store)->LoadGenerations();
  ASSERT_TRUE(generations.ok()) << generations.status();
  ASSERT_EQ(generations->size(), 1u);
  EXPECT_EQ((*generations)[0].number(), 5);
  ASSERT_EQ((*generations)[0].members_size(), 1);
  EXPECT_EQ((*generations)[0].members(0).worker_id(), "w-resaved");
}

// A database written before DeleteJob existed (no counters table) opens,
// loads and gains the deletion bookkeeping.
TEST(StateStoreTest, DatabaseFromBeforeDeleteJobStillWorks) {
  const std::string path = TempPath("old.db");
  {
    v1::Job job = MakeJob("mnist-1", v1::JOB_STATE_SUCCEEDED);
    std::string blob = job.SerializeAsString();
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE TABLE jobs (seq INTEGER PRIMARY KEY "
                           "AUTOINCREMENT, job_id TEXT NOT NULL UNIQUE, name "
                           "TEXT NOT NULL, state INTEGER NOT NULL, job BLOB "
                           "NOT NULL);",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "INSERT INTO jobs(job_id, name, state, job) "
                                 "VALUES('mnist-1', 'mnist', 5, ?1)",
                                 -1, &st, nullptr),
              SQLITE_OK);
    sqlite3_bind_blob(st, 1, blob.data(), static_cast<int>(blob.size()),
                      SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  auto store = StateStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  auto jobs = (*store)->LoadJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ(*(*store)->NextJobSequence(), 2);
  ASSERT_TRUE((*store)->DeleteJob("mnist-1").ok());
  EXPECT_EQ(*(*store)->NextJobSequence(), 2);
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
