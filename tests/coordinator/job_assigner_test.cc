#include "coordinator/job_assigner.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/coordinator_managers.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

class JobAssignerTest : public testing::CoordinatorManagersTest {
 protected:
  // The directive for a heartbeat of `w` reporting `job_id`'s `generation`
  // (none: idle or not joined).
  v1::HeartbeatResponse Beat(const Worker& w, const std::string& job_id = "",
                             int64_t generation = 0) {
    v1::HeartbeatRequest r;
    r.set_worker_id(w.id);
    r.set_job_id(job_id);
    r.set_generation(generation);
    return assigner_.Directive(*workers_.Get(w.id), r);
  }

  std::string JobOf(const Worker& w) { return workers_.Get(w.id)->job_id(); }

  JobAssigner assigner_{workers_, jobs_, rendezvous_};
};

TEST_F(JobAssignerTest, AnIdleWorkerIsOfferedTheOldestJobWithRoom) {
  const std::string first = Submit(testing::MinimalJobSpec("first", 1, 1));
  const std::string second = Submit(testing::MinimalJobSpec("second", 1, 1));
  const Worker a = Register(), b = Register(), c = Register();
  EXPECT_EQ(Beat(a).assignment().job_id(), first);
  EXPECT_EQ(Beat(b).assignment().job_id(), second);
  EXPECT_FALSE(Beat(c).has_assignment());
  EXPECT_EQ(JobOf(a), first);
  EXPECT_EQ(JobOf(c), "");
  // A gone worker's place is free again.
  assigner_.Forget(a.id, first);
  EXPECT_EQ(Beat(c).assignment().job_id(), first);
}

TEST_F(JobAssignerTest, EveryAssignmentIsToldToTheHook) {
  std::vector<std::pair<std::string, std::string>> told;
  assigner_.SetAssignedHook(
      [&told](const std::string& job_id, const std::string& worker_id) {
        told.emplace_back(job_id, worker_id);
      });
  const std::string job = Submit(testing::MinimalJobSpec("told", 1, 2));
  const Worker a = Register(), b = Register(), c = Register();
  ASSERT_EQ(Beat(a).assignment().job_id(), job);
  assigner_.Adopt(job, {b.id});
  EXPECT_EQ(told, (std::vector<std::pair<std::string, std::string>>{
                      {job, a.id}, {job, b.id}}));
  // No room for a third: nothing told.
  EXPECT_FALSE(Beat(c).has_assignment());
  EXPECT_EQ(told.size(), 2u);
}

TEST_F(JobAssignerTest, TheAssignmentIsSaidAgainUntilTheWorkerJoins) {
  const std::string job = Submit(testing::MinimalJobSpec("again", 1, 1));
  const Worker a = Register();
  ASSERT_EQ(Beat(a).assignment().job_id(), job);
  EXPECT_EQ(Beat(a).assignment().job_id(), job);  // Its answer was lost.
  Form(job, {a});
  // A member is never told to join again: it would end its generation.
  EXPECT_FALSE(Beat(a).has_assignment());
  EXPECT_FALSE(Beat(a, job, 1).has_assignment());
  EXPECT_FALSE(Beat(a, job, 1).has_abort());
}

TEST_F(JobAssignerTest, AnEndedGenerationsMembersAreToldToRejoin) {
  v1::JobSpec spec = testing::MinimalJobSpec("rejoin", 2, 2);
  spec.set_max_restarts(3);  // The job goes on.
  const std::string job = Submit(spec);
  const Worker a = Register(), b = Register();
  Form(job, {a, b});
  rendezvous_.RemoveWorker(job, b.id, "b died");
  const v1::HeartbeatResponse out = Beat(a, job, 1);
  ASSERT_TRUE(out.has_abort());
  EXPECT_TRUE(out.abort().rejoin());
  EXPECT_EQ(out.abort().generation(), 1);
}

TEST_F(JobAssignerTest, AFinishedJobReleasesItsWorkers) {
  const std::string job = Submit(testing::MinimalJobSpec("done", 1, 1));
  const Worker a = Register();
  ASSERT_EQ(Beat(a).assignment().job_id(), job);
  ASSERT_TRUE(jobs_.Cancel(job).ok());
  const v1::HeartbeatResponse out = Beat(a, job, 0);
  ASSERT_TRUE(out.has_abort());
  EXPECT_FALSE(out.abort().rejoin());
  EXPECT_EQ(out.abort().reason(), "job is JOB_STATE_CANCELLED");
  EXPECT_EQ(JobOf(a), "");
}

TEST_F(JobAssignerTest, NoWorkerIsTakenOnceTheGenerationTrainedToTheEnd) {
  const std::string job = Submit(testing::MinimalJobSpec("trained", 1, 3));
  const Worker a = Register(), newcomer = Register();
  Form(job, {a});
  rendezvous_.Advance(job, 1, Rendezvous::Stage::kTrained);
  EXPECT_FALSE(Beat(newcomer).has_assignment());
}

TEST_F(JobAssignerTest, AMemberRegisteredAgainIsBackWhateverTheRoom) {
  const std::string job = Submit(testing::MinimalJobSpec("back", 1, 1));
  const Worker a = Register(), stranger = Register();
  Form(job, {a});
  // Judged gone: its place went to another worker.
  ASSERT_TRUE(workers_.SetJob(a.id, "").ok());
  assigner_.Forget(a.id, job);
  ASSERT_EQ(Beat(stranger).assignment().job_id(), job);
  // A newcomer gets no room now, but the member itself does.
  assigner_.AssignAgain(a.id, job);
  EXPECT_EQ(JobOf(a), job);
  // A worker that is no member is taken only where there is room.
  const Worker late = Register();
  assigner_.AssignAgain(late.id, job);
  EXPECT_EQ(JobOf(late), "");
}

TEST_F(JobAssignerTest, AnAdoptedGenerationsMembersFillTheJob) {
  const std::string job = Submit(testing::MinimalJobSpec("adopted", 1, 2));
  const Worker a = Register(), b = Register(), c = Register();
  assigner_.Adopt(job, {a.id, b.id});
  EXPECT_FALSE(Beat(c).has_assignment());
}

}  // namespace
}  // namespace ringleader
