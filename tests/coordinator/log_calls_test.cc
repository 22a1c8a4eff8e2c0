#include "coordinator/log_calls.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/coordinator_managers.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

class LogCallsTest : public testing::CoordinatorManagersTest {
 protected:
  void SetUp() override {
    CoordinatorManagersTest::SetUp();
    jobs_.SetDeletedHook(
        [this](const std::string& job_id) { store_logs_.Delete(job_id); });
    job_ = Submit(testing::MinimalJobSpec("logs", 2, 2));
    members_ = {Register(), Register()};
    gen_ = Form(job_, members_);
    ASSERT_EQ(gen_.number, 1);
  }

  v1::AppendLogsRequest Lines(const Worker& w, int32_t rank,
                              std::vector<std::string> texts) {
    v1::AppendLogsRequest r;
    r.set_worker_id(w.id);
    r.set_job_id(job_);
    int64_t t = 1000;
    for (const std::string& text : texts) {
      v1::LogLine* line = r.add_lines();
      line->set_time_ms(t++);
      line->set_rank(rank);
      line->set_generation(1);
      line->set_severity("INFO");
      line->set_text(text);
    }
    return r;
  }

  v1::GetJobLogsResponse Read(v1::GetJobLogsRequest r = {}) {
    if (r.job_id().empty()) r.set_job_id(job_);
    absl::StatusOr<v1::GetJobLogsResponse> out = calls_.GetJobLogs(r);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.value_or(v1::GetJobLogsResponse());
  }

  CallerChecks checks_{workers_, rendezvous_, jobs_};
  LogStore store_logs_{LogStore::Limits()};
  LogCalls calls_{checks_, workers_, jobs_, store_logs_, "incarnation-1"};
  std::string job_;
  std::vector<Worker> members_;
  Rendezvous::Generation gen_;
};

TEST_F(LogCallsTest, AnAssignedWorkersLinesAreReadWithItsHost) {
  const Worker& w = members_[0];
  ASSERT_TRUE(calls_.AppendLogs(w.caller, Lines(w, 0, {"one", "two"})).ok());
  const v1::GetJobLogsResponse out = Read();
  ASSERT_EQ(out.lines_size(), 2);
  EXPECT_EQ(out.lines(0).text(), "one");
  EXPECT_EQ(out.lines(0).host(), "host");
  EXPECT_EQ(out.lines(0).worker_id(), w.id);
  EXPECT_EQ(out.last_seq(), 2);
  EXPECT_EQ(out.incarnation(), "incarnation-1");
  EXPECT_EQ(out.state(), v1::JOB_STATE_RUNNING);
}

TEST_F(LogCallsTest, OnlyTheWorkerItselfAssignedTheJobAppends) {
  const Worker& w = members_[0];
  EXPECT_TRUE(absl::IsUnauthenticated(
      calls_.AppendLogs(Caller(), Lines(w, 0, {"x"})).status()));
  EXPECT_TRUE(absl::IsUnauthenticated(
      calls_.AppendLogs(members_[1].caller, Lines(w, 0, {"x"})).status()));
  const Worker outsider = Register();
  EXPECT_TRUE(absl::IsFailedPrecondition(
      calls_.AppendLogs(outsider.caller, Lines(outsider, 0, {"x"})).status()));
  v1::AppendLogsRequest gone = Lines(w, 0, {"x"});
  gone.set_job_id("no-such-job");
  EXPECT_TRUE(absl::IsNotFound(calls_.AppendLogs(w.caller, gone).status()));
  EXPECT_EQ(Read().lines_size(), 0);
}

TEST_F(LogCallsTest, AWorkerReleasedFromItsJobStillSendsItsLastLines) {
  const Worker& w = members_[0];
  ASSERT_TRUE(calls_.AppendLogs(w.caller, Lines(w, 0, {"first"})).ok());
  ASSERT_TRUE(workers_.SetJob(w.id, "").ok());  // The job let it go.
  ASSERT_TRUE(calls_.AppendLogs(w.caller, Lines(w, 0, {"last"})).ok());
  EXPECT_EQ(Read().lines_size(), 2);
}

TEST_F(LogCallsTest, AWorkerTheJobsProgressNamesAppendsAfterARestart) {
  // A restarted coordinator keeps no admissions, and a finished job's
  // workers are released: the job's record of its ranks still counts.
  const Worker& w = Holder(members_, gen_, 0);
  v1::ReportProgressRequest report;
  report.set_job_id(job_);
  report.set_generation(1);
  report.set_rank(0);
  report.set_step(1);
  ASSERT_TRUE(jobs_.ReportProgress(report, w.id).ok());
  ASSERT_TRUE(workers_.SetJob(w.id, "").ok());
  ASSERT_TRUE(calls_.AppendLogs(w.caller, Lines(w, 0, {"late"})).ok());
  const Worker& other = Holder(members_, gen_, 1);
  ASSERT_TRUE(workers_.SetJob(other.id, "").ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(
      calls_.AppendLogs(other.caller, Lines(other, 1, {"x"})).status()));
}

TEST_F(LogCallsTest, BadLinesAreRefusedAndLongOnesCut) {
  const Worker& w = members_[0];
  EXPECT_TRUE(absl::IsInvalidArgument(
      calls_.AppendLogs(w.caller, Lines(w, 2, {"rank 2 of 2"})).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      calls_.AppendLogs(w.caller, Lines(w, -2, {"x"})).status()));
  v1::AppendLogsRequest many = Lines(w, 0, {});
  for (int i = 0; i <= kMaxLogLinesPerCall; ++i)
    *many.add_lines() = v1::LogLine();
  EXPECT_TRUE(
      absl::IsInvalidArgument(calls_.AppendLogs(w.caller, many).status()));
  v1::AppendLogsRequest negative = Lines(w, 0, {"x"});
  negative.set_dropped(-1);
  EXPECT_TRUE(
      absl::IsInvalidArgument(calls_.AppendLogs(w.caller, negative).status()));
  ASSERT_TRUE(
      calls_.AppendLogs(w.caller, Lines(w, 0, {std::string(10000, 'x')})).ok());
  const v1::GetJobLogsResponse out = Read();
  ASSERT_EQ(out.lines_size(), 1);
  EXPECT_EQ(out.lines(0).text().size(), kMaxLogLineBytes);
  EXPECT_EQ(out.lines(0).text().substr(kMaxLogLineBytes - 3), "...");
}

TEST_F(LogCallsTest, AFollowersCursorCountsOnlyForThisCoordinator) {
  const Worker& w = members_[0];
  ASSERT_TRUE(calls_.AppendLogs(w.caller, Lines(w, 0, {"a", "b"})).ok());
  v1::GetJobLogsRequest follow;
  follow.set_after_seq(2);
  follow.set_incarnation("incarnation-1");
  EXPECT_EQ(Read(follow).lines_size(), 0);
  ASSERT_TRUE(calls_.AppendLogs(w.caller, Lines(w, 0, {"c"})).ok());
  ASSERT_EQ(Read(follow).lines_size(), 1);
  EXPECT_EQ(Read(follow).lines(0).text(), "c");
  // A cursor of a coordinator that restarted since starts from the top.
  follow.set_incarnation("incarnation-0");
  EXPECT_EQ(Read(follow).lines_size(), 3);
}

TEST_F(LogCallsTest, RequestsNamingNothingOrNonsenseAreRefused) {
  EXPECT_TRUE(absl::IsInvalidArgument(calls_.GetJobLogs({}).status()));
  v1::GetJobLogsRequest unknown;
  unknown.set_job_id("no-such-job");
  EXPECT_TRUE(absl::IsNotFound(calls_.GetJobLogs(unknown).status()));
  v1::GetJobLogsRequest negative;
  negative.set_job_id(job_);
  negative.set_tail(-1);
  EXPECT_TRUE(absl::IsInvalidArgument(calls_.GetJobLogs(negative).status()));
}

TEST_F(LogCallsTest, ADeletedJobTakesItsLogWithIt) {
  const Worker& w = members_[0];
  ASSERT_TRUE(calls_.AppendLogs(w.caller, Lines(w, 0, {"why it failed"})).ok());
  ASSERT_TRUE(jobs_.Cancel(job_).ok());
  EXPECT_EQ(Read().lines_size(), 1);  // A finished job keeps its log.
  ASSERT_TRUE(jobs_.Delete(job_).ok());
  EXPECT_EQ(store_logs_.bytes(), 0);
  v1::GetJobLogsRequest r;
  r.set_job_id(job_);
  EXPECT_TRUE(absl::IsNotFound(calls_.GetJobLogs(r).status()));
  EXPECT_TRUE(absl::IsNotFound(
      calls_.AppendLogs(w.caller, Lines(w, 0, {"late"})).status()));
}

}  // namespace
}  // namespace ringleader
