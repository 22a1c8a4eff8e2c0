// The coordinator is killed with SIGKILL and restarted on the same SQLite
// file: jobs, their states and generations come back.
#include <signal.h>

#include <fstream>

#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/testing/job_specs.h"

namespace ringleader::testing {
namespace {

v1::JobSpec Spec(const std::string& name) { return MinimalJobSpec(name, 2, 2); }

TEST(CoordinatorRestartTest, JobsSurviveKillNine) {
  auto cluster = Cluster::Start("restart");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto a = (*cluster)->Submit(Spec("alpha"));
  auto b = (*cluster)->Submit(Spec("beta"));
  ASSERT_TRUE(a.ok() && b.ok()) << a.status();
  v1::CancelJobRequest cancel;
  cancel.set_job_id(*b);
  v1::Job cancelled;
  grpc::ClientContext ctx;
  ASSERT_TRUE((*cluster)->users().CancelJob(&ctx, cancel, &cancelled).ok());

  (*cluster)->StopCoordinator(SIGKILL);
  ASSERT_TRUE((*cluster)->StartCoordinator().ok());

  auto ja = (*cluster)->Get(*a);
  ASSERT_TRUE(ja.ok()) << ja.status();
  EXPECT_EQ(ja->state(), v1::JOB_STATE_PENDING);
  EXPECT_EQ(ja->spec().name(), "alpha");
  auto jb = (*cluster)->Get(*b);
  ASSERT_TRUE(jb.ok());
  EXPECT_EQ(jb->state(), v1::JOB_STATE_CANCELLED);
  // New ids continue after the recovered ones.
  auto c = (*cluster)->Submit(Spec("alpha"));
  ASSERT_TRUE(c.ok());
  EXPECT_NE(*c, *a);
  EXPECT_EQ(*c, "alpha-3");
}

TEST(CoordinatorRestartTest, GarbageStateFileIsAClearError) {
  const std::string dir = FreshDir("garbage-state");
  { std::ofstream(dir + "/state.db") << std::string(4096, 'z'); }
  ProcessOptions o;
  o.stderr_path = dir + "/log";
  auto p = Subprocess::Start(
      {RunfilePath("coordinator/ringleader-coordinator"),
       "--listen=127.0.0.1:0", "--state=" + dir + "/state.db"},
      o);
  ASSERT_TRUE(p.ok());
  auto code = (*p)->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 1);
  EXPECT_NE(
      ReadFileOrEmpty(dir + "/log").find("not a Ringleader state database"),
      std::string::npos)
      << ReadFileOrEmpty(dir + "/log");
}

}  // namespace
}  // namespace ringleader::testing
