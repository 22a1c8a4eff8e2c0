// ListJobs and DeleteJob over the real gRPC service, with jobs far larger
// than a listing may carry: the state file is written beforehand through
// the StateStore (as a coordinator before this change, or before a spec size
// bound, could have left it), so the test holds whatever the validator
// accepts at submit.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "coordinator/state_store.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "tests/testing/in_process_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

using grpc::StatusCode;

constexpr size_t kGrpcDefaultMax = 4 << 20;  // A client's receive limit.
constexpr size_t kBig = 1 << 20;
constexpr int kLargeJobs = 8;  // 2 MiB each: 16 MiB in all.
constexpr char kToken[] = "list-test-token-0123456789";

std::string StatePath() {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/list_state.db";
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((path + suffix).c_str());
  }
  return path;
}

// A finished job of about 2 MiB: a long checkpoint path and a long metric
// name in its evaluation history.
v1::Job LargeJob(int n, v1::JobState state) {
  v1::Job job;
  job.set_job_id("large-" + std::to_string(n));
  *job.mutable_spec() = testing::MinimalJobSpec("large", 1, 1);
  job.mutable_spec()->set_checkpoint_dir("/ckpt/" + std::string(kBig, 'c'));
  job.set_state(state);
  job.set_create_time_ms(1000 + n);
  job.set_update_time_ms(2000 + n);
  v1::Metric* m = job.mutable_progress()->add_evaluations()->add_metrics();
  m->set_name(std::string(kBig, 'm'));
  return job;
}

class JobListServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = StatePath();
    {
      auto store = StateStore::Open(path);
      ASSERT_TRUE(store.ok()) << store.status();
      for (int n = 1; n <= kLargeJobs; ++n) {
        // The last one is live: a restarted coordinator brings it back.
        const v1::JobState state =
            n == kLargeJobs ? v1::JOB_STATE_RUNNING : v1::JOB_STATE_SUCCEEDED;
        ASSERT_TRUE((*store)->SaveJob(LargeJob(n, state)).ok());
      }
    }
    CoordinatorServerConfig config = testing::InProcessCoordinator::Config();
    config.state_path = path;
    config.auth_token = kToken;
    auto c = testing::InProcessCoordinator::Start(config);
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = *std::move(c);
  }

  grpc::Status List(int32_t page_size, const std::string& token,
                    v1::ListJobsResponse* resp) {
    v1::ListJobsRequest req;
    req.set_page_size(page_size);
    req.set_page_token(token);
    return coordinator_->users().ListJobs(testing::ClientContext().get(), req,
                                          resp);
  }

  grpc::Status Delete(const std::string& id, bool with_token = true) {
    v1::DeleteJobRequest req;
    req.set_job_id(id);
    v1::DeleteJobResponse resp;
    auto ctx = testing::ClientContext();
    if (with_token)
      ctx->AddMetadata("authorization", std::string("Bearer ") + kToken);
    return coordinator_->users().DeleteJob(ctx.get(), req, &resp);
  }

  std::unique_ptr<testing::InProcessCoordinator> coordinator_;
};

TEST_F(JobListServiceTest, PagesOfLargeJobsStayFarBelowTheLimit) {
  std::vector<std::string> ids;
  std::string token;
  int pages = 0;
  do {
    v1::ListJobsResponse resp;
    grpc::Status s = List(/*page_size=*/0, token, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_LT(resp.ByteSizeLong(), kGrpcDefaultMax / 100);
    for (const v1::Job& job : resp.jobs()) ids.push_back(job.job_id());
    token = resp.next_page_token();
    ASSERT_LT(++pages, 10);
  } while (!token.empty());
  ASSERT_EQ(ids.size(), static_cast<size_t>(kLargeJobs));
  EXPECT_EQ(ids.front(), "large-1");
  EXPECT_EQ(ids.back(), "large-8");

  // Small pages walk the same jobs.
  v1::ListJobsResponse first, second;
  ASSERT_TRUE(List(3, "", &first).ok());
  ASSERT_EQ(first.jobs_size(), 3);
  ASSERT_TRUE(List(3, first.next_page_token(), &second).ok());
  EXPECT_EQ(second.jobs(0).job_id(), "large-4");

  // GetJob still has everything.
  v1::GetJobRequest get;
  get.set_job_id("large-2");
  v1::Job full;
  ASSERT_TRUE(coordinator_->users()
                  .GetJob(testing::ClientContext().get(), get, &full)
                  .ok());
  EXPECT_GT(full.spec().checkpoint_dir().size(), kBig);
  EXPECT_EQ(full.progress().evaluations_size(), 1);
}

TEST_F(JobListServiceTest, BadPageArgumentsAreInvalidArgument) {
  v1::ListJobsResponse resp;
  EXPECT_EQ(List(-1, "", &resp).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(List(0, "bm90IGEgdG9rZW4", &resp).error_code(),
            StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(List(1, "", &resp).ok());
  // A token of the unfiltered listing, used with a filter.
  v1::ListJobsRequest req;
  req.add_states(v1::JOB_STATE_SUCCEEDED);
  req.set_page_token(resp.next_page_token());
  EXPECT_EQ(coordinator_->users()
                .ListJobs(testing::ClientContext().get(), req, &resp)
                .error_code(),
            StatusCode::INVALID_ARGUMENT);
}

TEST_F(JobListServiceTest, DeleteJobOnlyFinishedAndWithTheToken) {
  EXPECT_EQ(Delete("large-1", /*with_token=*/false).error_code(),
            StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Delete("large-8").error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Delete("nope-1").error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(Delete("").error_code(), StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(Delete("large-1").ok());
  EXPECT_EQ(Delete("large-1").error_code(), StatusCode::NOT_FOUND);
  v1::ListJobsResponse resp;
  ASSERT_TRUE(List(0, "", &resp).ok());
  ASSERT_EQ(resp.jobs_size(), kLargeJobs - 1);
  EXPECT_EQ(resp.jobs(0).job_id(), "large-2");
}

}  // namespace
}  // namespace ringleader
