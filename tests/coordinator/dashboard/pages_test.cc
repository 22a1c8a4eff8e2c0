// The pages as pure functions of their data: what each shows, and that a
// hostile job name, log line, reason or host name is text, never markup.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "coordinator/dashboard/job_page.h"
#include "coordinator/dashboard/jobs_page.h"
#include "coordinator/dashboard/workers_page.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader::dashboard {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kHostile[] = "<script>alert('x')</script>";

v1::Job HostileJob(v1::JobState state) {
  v1::Job job;
  job.set_job_id("evil-1");
  job.mutable_spec()->set_name(kHostile);
  job.set_state(state);
  job.set_generation(2);
  job.set_world_size(2);
  job.set_message(kHostile);
  job.mutable_progress()->set_step(40);
  job.mutable_progress()->set_total_steps(100);
  v1::RankProgress* r = job.mutable_progress()->add_ranks();
  r->set_rank(0);
  r->set_worker_id(kHostile);
  return job;
}

JobPageData Data(v1::JobState state) {
  JobPageData d;
  d.job = HostileJob(state);
  d.history.set_max_points(1000);
  d.history.set_stride(1);
  for (int step = 10; step <= 40; step += 10) {
    v1::HistoryPoint* p = d.history.add_points();
    p->set_step(step);
    p->set_loss(2.0 / step);
    p->set_learning_rate(0.1);
    p->set_grad_norm(1.5);
    p->set_samples_per_sec(1000);
    for (int rank = 0; rank < 2; ++rank) {
      v1::RankSample* s = p->add_ranks();
      s->set_rank(rank);
      s->set_step_time_ms(10 + rank);
      s->set_data_wait_share(0.1 * rank);
    }
  }
  v1::EpochEvaluation* e = d.history.add_evaluations();
  e->set_epoch(1);
  v1::Metric* m = e->add_metrics();
  m->set_name(kHostile);
  m->set_value(0.8);
  v1::LogLine line;
  line.set_rank(1);
  line.set_host(kHostile);
  line.set_severity("INFO");
  line.set_text(kHostile);
  d.logs[1].push_back(line);
  GenerationEvent formed;
  formed.generation = 2;
  formed.members = {kHostile, "h1 (w2)"};
  formed.joined = {"w2"};
  formed.left = {"w1"};
  formed.recovery = true;
  formed.steps_lost = 7;
  GenerationEvent ended;
  ended.kind = GenerationEvent::Kind::kEnded;
  ended.generation = 1;
  ended.reason = kHostile;
  ended.reached_step = 30;
  d.generations.events = {ended, formed};
  d.now = absl::FromUnixSeconds(1000);
  return d;
}

TEST(JobPageTest, UserTextIsEscapedEverywhere) {
  const std::string page = RenderJobPage(Data(v1::JOB_STATE_RUNNING));
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_THAT(page, HasSubstr("&lt;script&gt;alert(&#39;x&#39;)"));
}

TEST(JobPageTest, ShowsTheCurvesRanksGenerationsAndLogs) {
  const std::string page = RenderJobPage(Data(v1::JOB_STATE_RUNNING));
  for (const char* id : {"chart-loss", "chart-learning-rate", "chart-grad-norm",
                         "chart-samples-per-sec", "chart-step-time",
                         "chart-data-wait", "chart-eval-0"}) {
    EXPECT_THAT(page, HasSubstr(absl::StrCat("id=\"", id, "\""))) << id;
  }
  EXPECT_THAT(page, HasSubstr("data-series=\"loss\" data-points=\"4\""));
  EXPECT_THAT(page, HasSubstr("data-series=\"rank 1\" data-points=\"4\""));
  EXPECT_THAT(page, HasSubstr("40 of 100"));
  EXPECT_THAT(page, HasSubstr("7 steps lost"));
  EXPECT_THAT(page, HasSubstr("joined: w2"));
  EXPECT_THAT(page, HasSubstr("left: w1"));
  EXPECT_THAT(page, HasSubstr("(at step 30)"));
  EXPECT_THAT(page, HasSubstr("id=\"log-rank-1\""));
}

TEST(JobPageTest, ALiveJobRefreshesAndAFinishedOneStops) {
  EXPECT_THAT(RenderJobPage(Data(v1::JOB_STATE_RUNNING)),
              HasSubstr("http-equiv=\"refresh\""));
  const std::string done = RenderJobPage(Data(v1::JOB_STATE_SUCCEEDED));
  EXPECT_THAT(done, Not(HasSubstr("http-equiv=\"refresh\"")));
  EXPECT_THAT(done, HasSubstr("data-state=\"SUCCEEDED\""));
}

// Issue 49: a finished two-epoch job said "epoch / step 1 / 938 of 938"
// and "6.486e+04" samples/s.
TEST(JobPageTest, AFinishedJobCountsItsEpochsFromOneAndItsRateAsACount) {
  JobPageData d = Data(v1::JOB_STATE_SUCCEEDED);
  d.job.mutable_spec()->set_epochs(2);
  d.job.mutable_progress()->set_epoch(1);
  d.job.mutable_progress()->set_step(938);
  d.job.mutable_progress()->set_total_steps(938);
  d.job.mutable_progress()->set_samples_per_sec(64860.4);
  const std::string page = RenderJobPage(d);
  EXPECT_THAT(page, HasSubstr("<th>epoch</th><td>2 of 2</td>"));
  EXPECT_THAT(page, HasSubstr("<th>step</th><td>938 of 938</td>"));
  EXPECT_THAT(page, HasSubstr("<th>samples/s</th><td>64,860</td>"));
  EXPECT_THAT(page, Not(HasSubstr("e+0")));
  // Before its first step: no epoch yet.
  d.job.mutable_progress()->set_epoch(0);
  d.job.mutable_progress()->set_step(0);
  EXPECT_THAT(RenderJobPage(d), HasSubstr("<th>epoch</th><td>-</td>"));
}

TEST(JobPageTest, ShowsWhomTheRanksWaitFor) {
  JobPageData d = Data(v1::JOB_STATE_RUNNING);
  v1::WaitingFor* w = d.job.mutable_waiting_for();
  w->set_waited_ms(12300);
  w->set_wait_phase(v1::WORKER_PHASE_ALLREDUCE_WAIT);
  w->set_step(4711);
  w->set_rank(1);
  w->set_host(kHostile);
  w->set_phase(v1::WORKER_PHASE_DATA_LOADING);
  w->set_phase_ms(12400);
  const std::string page = RenderJobPage(d);
  EXPECT_THAT(page, HasSubstr("id=\"waiting-for\">waiting 12.3 s in "
                              "all-reduce of step 4711 for rank 1"));
  EXPECT_THAT(page, Not(HasSubstr("<script")));
}

TEST(JobPageTest, AJobWithoutHistoryHasEmptyCharts) {
  JobPageData d;
  d.job.set_job_id("new-1");
  d.job.set_state(v1::JOB_STATE_PENDING);
  const std::string page = RenderJobPage(d);
  EXPECT_THAT(page, HasSubstr("no points yet"));
  EXPECT_THAT(page, HasSubstr("No rank has reported."));
  EXPECT_THAT(page, HasSubstr("No log lines."));
}

TEST(JobsPageTest, ListsNewestFirstEscaped) {
  v1::Job a = HostileJob(v1::JOB_STATE_SUCCEEDED);
  a.set_job_id("first-1");
  v1::Job b = HostileJob(v1::JOB_STATE_RUNNING);
  b.set_job_id("second-2");
  const std::string page = RenderJobsPage({a, b}, 3);
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_LT(page.find("second-2"), page.find("first-1"));
  EXPECT_THAT(page, HasSubstr("<a href=\"/jobs/first-1\">first-1</a>"));
  EXPECT_THAT(page, HasSubstr("3 older not shown"));
  EXPECT_THAT(RenderJobsPage({}, 0), HasSubstr("No jobs."));
}

TEST(WorkersPageTest, ListsWorkersEscaped) {
  v1::ListWorkersResponse workers;
  v1::WorkerInfo* w = workers.add_workers();
  w->set_worker_id("w1");
  w->set_hostname(kHostile);
  w->set_state(v1::WORKER_STATE_BUSY);
  w->set_job_id("mnist-1");
  w->set_last_heartbeat_ms(999500);
  const std::string page =
      RenderWorkersPage(workers, absl::FromUnixSeconds(1000));
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_THAT(page, HasSubstr("BUSY"));
  EXPECT_THAT(page, HasSubstr("0.5 s ago"));
  EXPECT_THAT(page, HasSubstr("href=\"/jobs/mnist-1\""));
}

}  // namespace
}  // namespace ringleader::dashboard
