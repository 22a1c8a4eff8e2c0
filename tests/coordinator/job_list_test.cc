// JobManager's listing in pages, deletion of finished jobs and retention,
// and the summaries and page tokens of coordinator/job_listing.h.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/fake_clock.h"
#include "coordinator/job_listing.h"
#include "coordinator/job_manager.h"
#include "gtest/gtest.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

class JobListTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen({}); }

  // A manager over the same store, as after a coordinator restart.
  void Reopen(JobRetention retention) {
    if (store_ == nullptr) store_ = *StateStore::Open(":memory:");
    jobs_ = std::make_unique<JobManager>(store_.get(), &clock_, retention);
    ASSERT_TRUE(jobs_->Recover().ok());
  }

  // Submits `n` jobs named `name`, one millisecond apart; their ids.
  std::vector<std::string> SubmitMany(int n, const std::string& name = "job") {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      auto job = jobs_->Submit(testing::MinimalJobSpec(name, 1, 1));
      EXPECT_TRUE(job.ok()) << job.status();
      if (job.ok()) ids.push_back(job->job_id());
      clock_.Advance(absl::Milliseconds(1));
    }
    return ids;
  }

  // Every id of a listing followed page by page; fails on an error.
  std::vector<std::string> ListAll(const std::vector<v1::JobState>& states,
                                   int32_t page_size, int* pages = nullptr) {
    std::vector<std::string> ids;
    std::string token;
    int n = 0;
    do {
      auto page = jobs_->ListPage(states, page_size, token);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok() || ++n > 1000) break;
      EXPECT_LE(page->jobs.size(), static_cast<size_t>(page_size));
      for (const v1::Job& job : page->jobs) ids.push_back(job.job_id());
      token = page->next_page_token;
    } while (!token.empty());
    if (pages != nullptr) *pages = n;
    return ids;
  }

  FakeClock clock_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<JobManager> jobs_;
};

TEST_F(JobListTest, PagesCoverEveryJobOnceInCreationOrder) {
  const std::vector<std::string> ids = SubmitMany(23);
  int pages = 0;
  EXPECT_EQ(ListAll({}, 5, &pages), ids);
  EXPECT_EQ(pages, 5);
  // An exact multiple ends with an empty token, not an empty page.
  EXPECT_EQ(ListAll({}, 23, &pages), ids);
  EXPECT_EQ(pages, 1);
}

TEST_F(JobListTest, SameMillisecondKeepsSubmitOrder) {
  std::vector<std::string> ids;
  for (int i = 0; i < 12; ++i) {  // "job-10" sorts before "job-9" as text.
    ids.push_back(
        jobs_->Submit(testing::MinimalJobSpec("job", 1, 1))->job_id());
  }
  EXPECT_EQ(ListAll({}, 5), ids);
}

TEST_F(JobListTest, PageSizeDefaultsClampsAndRefusesNegative) {
  SubmitMany(kMaxJobPageSize + 3);
  auto page = jobs_->ListPage({}, 0, "");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->jobs.size(), static_cast<size_t>(kDefaultJobPageSize));
  page = jobs_->ListPage({}, 100000, "");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->jobs.size(), static_cast<size_t>(kMaxJobPageSize));
  EXPECT_FALSE(page->next_page_token.empty());
  EXPECT_TRUE(absl::IsInvalidArgument(jobs_->ListPage({}, -1, "").status()));
}

TEST_F(JobListTest, StateFilterPagesOnlyMatchingJobs) {
  const std::vector<std::string> ids = SubmitMany(10);
  std::vector<std::string> cancelled;
  for (size_t i = 0; i < ids.size(); i += 3) {
    ASSERT_TRUE(jobs_->Cancel(ids[i]).ok());
    cancelled.push_back(ids[i]);
  }
  EXPECT_EQ(ListAll({v1::JOB_STATE_CANCELLED}, 2), cancelled);
  EXPECT_EQ(ListAll({v1::JOB_STATE_PENDING}, 3).size(), 6u);
}

TEST_F(JobListTest, BadOrForeignTokensAreInvalidArgument) {
  SubmitMany(4);
  auto first = jobs_->ListPage({}, 2, "");
  ASSERT_TRUE(first.ok());
  const std::string token = first->next_page_token;
  ASSERT_FALSE(token.empty());
  for (const std::string& bad :
       {std::string("not base64!"), absl::WebSafeBase64Escape("garbage"),
        absl::WebSafeBase64Escape("jobs1||x|job-1"),
        absl::WebSafeBase64Escape("jobs0||1|job-1"), token + "AAAA"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(jobs_->ListPage({}, 2, bad).status()))
        << bad;
  }
  // A token is only good for the filter it was made with.
  EXPECT_TRUE(absl::IsInvalidArgument(
      jobs_->ListPage({v1::JOB_STATE_PENDING}, 2, token).status()));
  EXPECT_TRUE(jobs_->ListPage({}, 2, token).ok());
}

TEST_F(JobListTest, TokenSurvivesDeletionOfItsJobAndARestart) {
  const std::vector<std::string> ids = SubmitMany(6);
  for (const std::string& id : ids) ASSERT_TRUE(jobs_->Cancel(id).ok());
  auto first = jobs_->ListPage({}, 3, "");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(jobs_->Delete(ids[2]).ok());  // The token's own job.
  Reopen({});
  auto second = jobs_->ListPage({}, 3, first->next_page_token);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->jobs.size(), 3u);
  EXPECT_EQ(second->jobs[0].job_id(), ids[3]);
  EXPECT_TRUE(second->next_page_token.empty());
}

TEST_F(JobListTest, DeleteOnlyFinishedJobs) {
  const std::vector<std::string> ids = SubmitMany(3);
  EXPECT_TRUE(absl::IsFailedPrecondition(jobs_->Delete(ids[0])));
  ASSERT_TRUE(jobs_->OnJoin(ids[1]).ok());
  ASSERT_TRUE(jobs_->OnGenerationFormed(ids[1], 1, 1).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(jobs_->Delete(ids[1])));
  EXPECT_TRUE(absl::IsNotFound(jobs_->Delete("nope-9")));

  ASSERT_TRUE(jobs_->Cancel(ids[0]).ok());
  ASSERT_TRUE(jobs_->Fail(ids[1], "broken").ok());
  ASSERT_TRUE(jobs_->Delete(ids[0]).ok());
  ASSERT_TRUE(jobs_->Delete(ids[1]).ok());
  EXPECT_TRUE(absl::IsNotFound(jobs_->Delete(ids[0])));
  EXPECT_TRUE(absl::IsNotFound(jobs_->Get(ids[0]).status()));
  EXPECT_EQ(ListAll({}, 10), std::vector<std::string>{ids[2]});

  // Gone from the store too, and no id comes back.
  Reopen({});
  EXPECT_EQ(ListAll({}, 10), std::vector<std::string>{ids[2]});
  EXPECT_EQ(SubmitMany(1)[0], "job-4");
}

TEST_F(JobListTest, RetentionKeepsTheNewestFinishedJobs) {
  Reopen({.max_finished = 2});
  const std::vector<std::string> ids = SubmitMany(5);
  // Finish in the order 3, 0, 4, 1: the first two to finish go.
  for (int i : {3, 0, 4, 1}) {
    ASSERT_TRUE(jobs_->Cancel(ids[i]).ok());
    clock_.Advance(absl::Milliseconds(1));
  }
  EXPECT_EQ(ListAll({}, 10),
            (std::vector<std::string>{ids[1], ids[2], ids[4]}));
  // A live job is never pruned, and a smaller limit applies at startup.
  Reopen({.max_finished = 1});
  EXPECT_EQ(ListAll({}, 10), (std::vector<std::string>{ids[1], ids[2]}));
}

TEST_F(JobListTest, RetentionByAgeAtFinishAndAtStartup) {
  Reopen({.max_age = absl::Hours(1)});
  const std::vector<std::string> ids = SubmitMany(3);
  ASSERT_TRUE(jobs_->Cancel(ids[0]).ok());
  clock_.Advance(absl::Minutes(50));
  ASSERT_TRUE(jobs_->Cancel(ids[1]).ok());
  clock_.Advance(absl::Minutes(20));
  EXPECT_EQ(ListAll({}, 10).size(), 3u);  // Nothing finished since.
  ASSERT_TRUE(jobs_->Cancel(ids[2]).ok());
  EXPECT_EQ(ListAll({}, 10), (std::vector<std::string>{ids[1], ids[2]}));
  clock_.Advance(absl::Hours(2));
  Reopen({.max_age = absl::Hours(1)});
  EXPECT_TRUE(ListAll({}, 10).empty());
}

TEST(JobSummaryTest, LeavesOutHeavyFieldsAndStaysSmall) {
  const std::string big(1 << 20, 'x');
  v1::Job job;
  job.set_job_id("big-7");
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  job.set_message(big);
  job.set_world_size(3);
  *job.mutable_spec() = testing::MinimalJobSpec("big", 2, 3);
  job.mutable_spec()->set_checkpoint_dir(big);
  job.mutable_spec()->mutable_model()->set_torchscript_path(big);
  job.mutable_progress()->set_step(40);
  job.mutable_progress()->set_test_accuracy(0.9);
  job.mutable_progress()->add_ranks()->set_worker_id(big);
  job.mutable_progress()->add_evaluations()->add_metrics()->set_name(big);
  job.mutable_progress()->add_test_metrics()->set_name(big);
  job.mutable_last_checkpoint()->set_step(40);
  job.mutable_last_checkpoint()->set_path(big);

  const v1::Job s = JobSummary(job);
  EXPECT_LT(s.ByteSizeLong(), 1024u);
  EXPECT_EQ(s.job_id(), "big-7");
  EXPECT_EQ(s.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(s.world_size(), 3);
  EXPECT_EQ(s.message(), big.substr(0, kSummaryMessageBytes));
  EXPECT_EQ(s.spec().name(), "big");
  EXPECT_EQ(s.spec().max_workers(), 3);
  EXPECT_TRUE(s.spec().checkpoint_dir().empty());
  EXPECT_FALSE(s.spec().has_model());
  EXPECT_EQ(s.progress().step(), 40);
  EXPECT_DOUBLE_EQ(s.progress().test_accuracy(), 0.9);
  EXPECT_EQ(s.progress().ranks_size(), 0);
  EXPECT_EQ(s.progress().evaluations_size(), 0);
  EXPECT_EQ(s.progress().test_metrics_size(), 0);
  EXPECT_EQ(s.last_checkpoint().step(), 40);
  EXPECT_TRUE(s.last_checkpoint().path().empty());
}

TEST(JobSummaryTest, MessageIsCutOnACharacterBoundary) {
  v1::Job job;
  // 2-byte characters from an odd offset: byte 512 is mid-character.
  std::string accents = "a";
  for (int i = 0; i < 400; ++i) accents += "\xC3\xA9";  // é
  job.set_message(accents);
  const std::string cut = JobSummary(job).message();
  EXPECT_LE(cut.size(), kSummaryMessageBytes);
  EXPECT_EQ(cut.size() % 2, 1u);  // "a" plus whole é's.
  EXPECT_EQ(accents.substr(0, cut.size()), cut);
}

}  // namespace
}  // namespace ringleader
