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

// The metric fields print under their proto3 JSON names.
TEST(JsonOutputTest, MetricsAppearByName) {
  v1::Job job;
  job.set_job_id("lm-1");
  job.mutable_spec()->mutable_task()->set_kind(v1::TASK_KIND_LANGUAGE_MODEL);
  job.mutable_spec()->mutable_task()->set_ignore_index(0);
  job.mutable_spec()->mutable_export_()->set_safetensors_path("/o/m.st");
  v1::JobProgress* p = job.mutable_progress();
  v1::Metric* m = p->add_test_metrics();
  m->set_name("perplexity");
  m->set_value(3.5);
  v1::EpochEvaluation* e = p->add_evaluations();
  e->set_epoch(1);
  *e->add_metrics() = *m;
  v1::RankProgress* r = p->add_ranks();
  v1::MetricSum* s = r->add_test_metrics();
  s->set_name("loss");
  s->set_sum(12.5);
  s->set_count(10);
  *r->add_eval_metrics() = *s;
  const nlohmann::json j = nlohmann::json::parse(JobJson(job));
  EXPECT_EQ(j["spec"]["task"]["kind"], "TASK_KIND_LANGUAGE_MODEL");
  // An explicit 0 is kept: the field has presence.
  EXPECT_EQ(j["spec"]["task"]["ignoreIndex"], "0");
  EXPECT_EQ(j["spec"]["export"]["safetensorsPath"], "/o/m.st");
  EXPECT_EQ(j["progress"]["testMetrics"][0]["name"], "perplexity");
  EXPECT_DOUBLE_EQ(j["progress"]["testMetrics"][0]["value"].get<double>(), 3.5);
  EXPECT_EQ(j["progress"]["evaluations"][0]["metrics"][0]["name"],
            "perplexity");
  EXPECT_EQ(j["progress"]["ranks"][0]["testMetrics"][0]["name"], "loss");
  EXPECT_DOUBLE_EQ(
      j["progress"]["ranks"][0]["testMetrics"][0]["sum"].get<double>(), 12.5);
  EXPECT_EQ(j["progress"]["ranks"][0]["testMetrics"][0]["count"], "10");
  EXPECT_EQ(j["progress"]["ranks"][0]["evalMetrics"][0]["name"], "loss");
}

// The recipe fields and the gradient norm under their JSON names.
TEST(JsonOutputTest, RecipeAndGradNormAppearByName) {
  v1::Job job;
  job.set_job_id("gpt-1");
  v1::JobSpec* spec = job.mutable_spec();
  spec->mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_ADAMW);
  spec->mutable_optimizer()->set_beta1(0);  // Presence: kept though 0.
  spec->mutable_optimizer()->set_no_decay_bias_and_norm(true);
  spec->mutable_lr_schedule()->set_kind(v1::LR_SCHEDULE_KIND_COSINE);
  spec->mutable_lr_schedule()->set_warmup_steps(100);
  spec->set_clip_grad_norm(1.0);
  job.mutable_progress()->set_grad_norm(0.75);
  const nlohmann::json j = nlohmann::json::parse(JobJson(job));
  EXPECT_EQ(j["spec"]["optimizer"]["kind"], "OPTIMIZER_KIND_ADAMW");
  EXPECT_DOUBLE_EQ(j["spec"]["optimizer"]["beta1"].get<double>(), 0);
  EXPECT_EQ(j["spec"]["optimizer"]["noDecayBiasAndNorm"], true);
  EXPECT_EQ(j["spec"]["lrSchedule"]["kind"], "LR_SCHEDULE_KIND_COSINE");
  EXPECT_EQ(j["spec"]["lrSchedule"]["warmupSteps"], "100");
  EXPECT_DOUBLE_EQ(j["spec"]["clipGradNorm"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["progress"]["gradNorm"].get<double>(), 0.75);
}

}  // namespace
}  // namespace ringleader::cli
