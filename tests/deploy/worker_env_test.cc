// worker/worker_env: the coordinator address from flag, RINGLEADER_COORDINATOR,
// a Kubeflow PyTorchJob's MASTER_ADDR/MASTER_PORT or Slurm's node list, and
// RANK/WORLD_SIZE, Slurm task and local-rank checks.
#include "worker/worker_env.h"

#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

const std::map<std::string, std::string> kPyTorchJob = {
    {"MASTER_ADDR", "train-master-0"},
    {"MASTER_PORT", "23456"},
    {"RANK", "2"},
    {"WORLD_SIZE", "4"},
};

TEST(WorkerEnvTest, DefaultWhenNothingIsGiven) {
  absl::StatusOr<WorkerEnv> e = ResolveWorkerEnv("", Env({}));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->coordinator, "127.0.0.1:7070");
  EXPECT_EQ(e->coordinator_source, "default");
  EXPECT_EQ(e->rank, std::nullopt);
  EXPECT_EQ(e->world_size, std::nullopt);
}

TEST(WorkerEnvTest, FlagWinsOverEverything) {
  auto vars = kPyTorchJob;
  vars["RINGLEADER_COORDINATOR"] = "env-host:1";
  absl::StatusOr<WorkerEnv> e = ResolveWorkerEnv("flag-host:7070", Env(vars));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->coordinator, "flag-host:7070");
  EXPECT_EQ(e->coordinator_source, "--coordinator");
  EXPECT_EQ(e->rank, 2);  // Still read and checked.
}

TEST(WorkerEnvTest, RingleaderCoordinatorWinsOverMaster) {
  auto vars = kPyTorchJob;
  vars["RINGLEADER_COORDINATOR"] = "coord.ringleader.svc:7070";
  absl::StatusOr<WorkerEnv> e = ResolveWorkerEnv("", Env(vars));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->coordinator, "coord.ringleader.svc:7070");
  EXPECT_EQ(e->coordinator_source, "RINGLEADER_COORDINATOR");
}

TEST(WorkerEnvTest, EmptyVariablesCountAsUnset) {
  auto vars = kPyTorchJob;
  vars["RINGLEADER_COORDINATOR"] = "";
  absl::StatusOr<WorkerEnv> e = ResolveWorkerEnv("", Env(vars));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->coordinator, "train-master-0:23456");
  absl::StatusOr<WorkerEnv> d = ResolveWorkerEnv(
      "", Env({{"MASTER_ADDR", " "}, {"RANK", ""}, {"WORLD_SIZE", ""}}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->coordinator_source, "default");
}

TEST(WorkerEnvTest, PyTorchJobEnvironmentAlone) {
  absl::StatusOr<WorkerEnv> e = ResolveWorkerEnv("", Env(kPyTorchJob));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->coordinator, "train-master-0:23456");
  EXPECT_EQ(e->coordinator_source, "MASTER_ADDR:MASTER_PORT");
  EXPECT_EQ(e->rank, 2);
  EXPECT_EQ(e->world_size, 4);
  EXPECT_EQ(DescribeWorkerEnv(*e),
            "coordinator train-master-0:23456 (from MASTER_ADDR:MASTER_PORT); "
            "PyTorchJob rank 2 of 4 (a hint: the coordinator assigns ranks)");
}

TEST(WorkerEnvTest, Ipv6MasterAddrIsBracketed) {
  absl::StatusOr<WorkerEnv> e = ResolveWorkerEnv(
      "", Env({{"MASTER_ADDR", "fd00::1"}, {"MASTER_PORT", "29500"}}));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->coordinator, "[fd00::1]:29500");
  absl::StatusOr<WorkerEnv> b = ResolveWorkerEnv(
      "", Env({{"MASTER_ADDR", "[fd00::1]"}, {"MASTER_PORT", "29500"}}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->coordinator, "[fd00::1]:29500");
}

TEST(WorkerEnvTest, MasterNeedsBothHalves) {
  absl::StatusOr<WorkerEnv> a =
      ResolveWorkerEnv("", Env({{"MASTER_ADDR", "m"}}));
  EXPECT_TRUE(absl::IsInvalidArgument(a.status()));
  EXPECT_THAT(a.status().message(), HasSubstr("$MASTER_PORT is not"));
  absl::StatusOr<WorkerEnv> p =
      ResolveWorkerEnv("", Env({{"MASTER_PORT", "1234"}}));
  EXPECT_TRUE(absl::IsInvalidArgument(p.status()));
  EXPECT_THAT(p.status().message(), HasSubstr("$MASTER_ADDR is not"));
  // Not needed when the address comes from elsewhere.
  EXPECT_TRUE(ResolveWorkerEnv("h:1", Env({{"MASTER_PORT", "1234"}})).ok());
}

TEST(WorkerEnvTest, BadMasterPort) {
  for (const char* port : {"0", "65536", "-1", "http", "80x"}) {
    absl::StatusOr<WorkerEnv> e = ResolveWorkerEnv(
        "", Env({{"MASTER_ADDR", "m"}, {"MASTER_PORT", port}}));
    EXPECT_TRUE(absl::IsInvalidArgument(e.status())) << port;
    EXPECT_THAT(e.status().message(), HasSubstr("$MASTER_PORT=")) << port;
  }
}

TEST(WorkerEnvTest, RankAndWorldSize) {
  EXPECT_THAT(ResolveWorkerEnv("", Env({{"RANK", "0"}})).status().message(),
              HasSubstr("$WORLD_SIZE is not"));
  EXPECT_THAT(
      ResolveWorkerEnv("", Env({{"WORLD_SIZE", "2"}})).status().message(),
      HasSubstr("$RANK is not"));
  EXPECT_THAT(ResolveWorkerEnv("", Env({{"RANK", "2"}, {"WORLD_SIZE", "2"}}))
                  .status()
                  .message(),
              HasSubstr("$RANK=2 must be an integer in 0..1 ($WORLD_SIZE=2)"));
  EXPECT_THAT(ResolveWorkerEnv("", Env({{"RANK", "-1"}, {"WORLD_SIZE", "2"}}))
                  .status()
                  .message(),
              HasSubstr("$RANK=-1"));
  EXPECT_THAT(ResolveWorkerEnv("", Env({{"RANK", "0"}, {"WORLD_SIZE", "0"}}))
                  .status()
                  .message(),
              HasSubstr("$WORLD_SIZE=0"));
  absl::StatusOr<WorkerEnv> last =
      ResolveWorkerEnv("", Env({{"RANK", "1"}, {"WORLD_SIZE", "2"}}));
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->rank, 1);
}

// What srun sets for task 3 of 4 of job 812 on a two-node allocation.
const std::map<std::string, std::string> kSlurmTask = {
    {"SLURM_JOB_ID", "812"}, {"SLURM_STEP_ID", "5"},
    {"SLURM_PROCID", "3"},   {"SLURM_NTASKS", "4"},
    {"SLURM_LOCALID", "1"},  {"SLURM_JOB_NODELIST", "gpu[07-08]"},
};

TEST(WorkerEnvTest, SlurmTaskFindsTheCoordinatorOnTheFirstNode) {
  absl::StatusOr<WorkerEnv> e = ResolveWorkerEnv("", Env(kSlurmTask));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->coordinator, "gpu07:7070");
  EXPECT_EQ(e->coordinator_source, "SLURM_JOB_NODELIST's first node");
  EXPECT_EQ(e->slurm_job_id, "812");
  EXPECT_EQ(e->slurm_procid, 3);
  EXPECT_EQ(e->slurm_ntasks, 4);
  EXPECT_EQ(e->local_rank, 1);
  EXPECT_EQ(e->slurm_step_id, 5);
  EXPECT_THAT(DescribeWorkerEnv(*e),
              HasSubstr("Slurm job 812 step 812.5 task 3 of 4"));
  EXPECT_EQ(*ResolveDevice("cuda", *e), "cuda:1");
  EXPECT_EQ(*ResolveDevice("cuda:0", *e), "cuda:0");
  EXPECT_EQ(*ResolveDevice("cpu", *e), "cpu");
  // The batch script's address wins over the node list.
  std::map<std::string, std::string> vars = kSlurmTask;
  vars["RINGLEADER_COORDINATOR"] = "gpu07:41234";
  EXPECT_EQ(ResolveWorkerEnv("", Env(vars))->coordinator, "gpu07:41234");
  vars.erase("RINGLEADER_COORDINATOR");
  vars["RINGLEADER_COORDINATOR_PORT"] = "9000";
  EXPECT_EQ(ResolveWorkerEnv("", Env(vars))->coordinator, "gpu07:9000");
}

TEST(WorkerEnvTest, BadSlurmVariablesAreNamed) {
  std::map<std::string, std::string> vars = kSlurmTask;
  vars["SLURM_PROCID"] = "4";
  EXPECT_THAT(ResolveWorkerEnv("", Env(vars)).status().message(),
              HasSubstr("$SLURM_PROCID=4 must be an integer in 0..3"));
  vars = kSlurmTask;
  vars["SLURM_JOB_NODELIST"] = "gpu[07-08";
  EXPECT_THAT(ResolveWorkerEnv("", Env(vars)).status().message(),
              HasSubstr("$SLURM_JOB_NODELIST: unclosed '['"));
  vars = kSlurmTask;
  vars["SLURM_LOCALID"] = "x";
  EXPECT_THAT(ResolveWorkerEnv("", Env(vars)).status().message(),
              HasSubstr("$SLURM_LOCALID=x"));
  absl::StatusOr<WorkerEnv> none = ResolveWorkerEnv("", Env({}));
  ASSERT_TRUE(none.ok());
  EXPECT_THAT(ResolveDevice("cuda", *none).status().message(),
              HasSubstr("neither $LOCAL_RANK nor $SLURM_LOCALID"));
}

TEST(WorkerEnvTest, TorchrunsLocalRankComesBeforeSlurms) {
  std::map<std::string, std::string> vars = kSlurmTask;
  vars["LOCAL_RANK"] = "0";
  EXPECT_EQ(ResolveWorkerEnv("", Env(vars))->local_rank, 0);
}

TEST(WorkerEnvTest, FirstHostOfASlurmHostList) {
  EXPECT_EQ(*FirstSlurmHost("node3"), "node3");
  EXPECT_EQ(*FirstSlurmHost("a1,b2"), "a1");
  EXPECT_EQ(*FirstSlurmHost("gpu[01-04,07],cpu3"), "gpu01");
  EXPECT_EQ(*FirstSlurmHost("gpu[12,3-4]"), "gpu12");
  EXPECT_EQ(*FirstSlurmHost("rack[2-3]-node,x"), "rack2-node");
  EXPECT_EQ(*FirstSlurmHost("cpu3,gpu[1-2]"), "cpu3");
  for (const char* bad : {"", "[1-2]", "gpu[", "gpu[]", "gpu[a-b]", ",x"}) {
    EXPECT_FALSE(FirstSlurmHost(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace ringleader
