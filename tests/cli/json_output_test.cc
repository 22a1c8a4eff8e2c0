#include "cli/json_output.h"

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ringleader::cli {
namespace {

TEST(JsonOutputTest, JobId) {
  EXPECT_EQ(nlohmann::json::parse(JobIdJson("a-1"))["job_id"], "a-1");
  EXPECT_EQ(JobIdJson("a-1", /*one_line=*/true), R"({"job_id":"a-1"})");
}

TEST(JsonOutputTest, JobsIsAnObjectWithAnArray) {
  v1::Job a;
  a.set_job_id("a-1");
  a.set_state(v1::JOB_STATE_RUNNING);
  a.set_generation(3);
  v1::Job b;
  b.set_job_id("b-2");
  const nlohmann::json j = nlohmann::json::parse(JobsJson({a, b}));
  ASSERT_TRUE(j["jobs"].is_array());
  ASSERT_EQ(j["jobs"].size(), 2u);
  EXPECT_EQ(j["jobs"][0]["jobId"], "a-1");
  EXPECT_EQ(j["jobs"][0]["state"], "JOB_STATE_RUNNING");
  EXPECT_EQ(j["jobs"][0]["generation"], "3");  // int64 as a string.
  EXPECT_EQ(j["jobs"][1]["jobId"], "b-2");
  EXPECT_EQ(nlohmann::json::parse(JobsJson({}))["jobs"],
            nlohmann::json::array());
}

TEST(JsonOutputTest, WorkersIsAnObjectWithAnArray) {
  v1::WorkerInfo w;
  w.set_worker_id("w-1");
  w.set_hostname("h");
  w.set_state(v1::WORKER_STATE_IDLE);
  const nlohmann::json j = nlohmann::json::parse(WorkersJson({w}));
  ASSERT_EQ(j["workers"].size(), 1u);
  EXPECT_EQ(j["workers"][0]["workerId"], "w-1");
  EXPECT_EQ(j["workers"][0]["state"], "WORKER_STATE_IDLE");
  EXPECT_EQ(nlohmann::json::parse(WorkersJson({}))["workers"],
            nlohmann::json::array());
}

TEST(JsonOutputTest, SingleJob) {
  v1::Job a;
  a.set_job_id("a-1");
  EXPECT_EQ(nlohmann::json::parse(JobJson(a))["jobId"], "a-1");
}

}  // namespace
}  // namespace ringleader::cli
