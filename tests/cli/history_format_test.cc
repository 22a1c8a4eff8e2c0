#include "cli/history_format.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ringleader::cli {
namespace {

v1::JobHistoryResponse History() {
  v1::JobHistoryResponse h;
  h.set_job_id("mnist-1");
  h.set_state(v1::JOB_STATE_SUCCEEDED);
  h.set_stride(1);
  h.set_max_points(1000);
  for (int i = 0; i < 4; ++i) {
    v1::HistoryPoint* p = h.add_points();
    p->set_step(10 * (i + 1));
    p->set_epoch(i / 2);  // Two points per epoch.
    p->set_loss(1.0 / (i + 1));
    p->set_learning_rate(0.05);
    p->set_grad_norm(2.5);
    p->set_samples_per_sec(1000 + i);
  }
  for (int epoch = 1; epoch <= 2; ++epoch) {
    v1::EpochEvaluation* e = h.add_evaluations();
    e->set_epoch(epoch);
    v1::Metric* m = e->add_metrics();
    m->set_name("accuracy");
    m->set_value(0.8 + 0.05 * epoch);
    m = e->add_metrics();
    m->set_name("loss");
    m->set_value(0.5 / epoch);
  }
  return h;
}

TEST(HistoryFormatTest, TableHasAPointPerRowAndEachEvaluationAfterItsEpoch) {
  const std::vector<std::string> lines =
      absl::StrSplit(FormatHistoryTable(History()), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1u + 4 + 2);
  EXPECT_EQ(lines[0],
            "STEP  EPOCH  LOSS    LR    GRAD NORM  SAMPLES/S  EVAL ACCURACY  "
            "EVAL LOSS");
  EXPECT_EQ(lines[1].substr(0, 20), "10    1      1.0000 ");
  EXPECT_EQ(lines[2].substr(0, 4), "20  ");
  // Epoch 1's evaluation, before the first point of epoch 2.
  EXPECT_EQ(lines[3].substr(0, 4), "eval");
  EXPECT_NE(lines[3].find("85.00%"), std::string::npos) << lines[3];
  EXPECT_NE(lines[3].find("0.5000"), std::string::npos) << lines[3];
  EXPECT_EQ(lines[4].substr(0, 4), "30  ");
  EXPECT_EQ(lines[6].substr(0, 4), "eval");
  EXPECT_NE(lines[6].find("90.00%"), std::string::npos) << lines[6];
}

TEST(HistoryFormatTest, SaysWhenThinnedOrEmpty) {
  v1::JobHistoryResponse h = History();
  h.set_stride(4);
  EXPECT_NE(FormatHistoryTable(h).find("one point per 4 reports of rank 0"),
            std::string::npos);
  v1::JobHistoryResponse empty;
  EXPECT_NE(FormatHistoryTable(empty).find("no training report"),
            std::string::npos);
}

TEST(HistoryFormatTest, JsonIsTheProtobufMapping) {
  const nlohmann::json j = nlohmann::json::parse(HistoryJson(History()));
  EXPECT_EQ(j["jobId"], "mnist-1");
  EXPECT_EQ(j["state"], "JOB_STATE_SUCCEEDED");
  ASSERT_EQ(j["points"].size(), 4u);
  EXPECT_EQ(j["points"][1]["step"], "20");  // int64 as a string.
  EXPECT_DOUBLE_EQ(j["points"][1]["loss"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["points"][0]["learningRate"].get<double>(), 0.05);
  EXPECT_EQ(j["evaluations"][1]["epoch"], "2");
}

}  // namespace
}  // namespace ringleader::cli
