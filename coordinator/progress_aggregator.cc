#include "coordinator/progress_aggregator.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/eval_metrics.h"

namespace ringleader {

bool ProgressAggregator::Add(const v1::ReportProgressRequest& report,
                             const std::string& worker, int64_t now_ms) {
  if (auto it = ranks_.find(report.rank()); it != ranks_.end()) {
    const v1::RankProgress& last = it->second;
    if (report.step() < last.step() ||
        (last.finished() && !report.finished())) {
      return false;
    }
  }
  v1::RankProgress& p = ranks_[report.rank()];
  p.set_rank(report.rank());
  p.set_worker_id(worker);
  p.set_epoch(report.epoch());
  p.set_step(report.step());
  p.set_loss(report.loss());
  p.set_samples_per_sec(report.samples_per_sec());
  if (!report.finished()) p.set_step_time_ms(report.step_time_ms());
  p.set_report_time_ms(now_ms);
  p.set_finished(report.finished());
  p.clear_gone();  // Heard after all.
  p.set_total_steps(report.total_steps());
  if (report.join_to_first_step_ms() > 0) {
    p.set_join_to_first_step_ms(report.join_to_first_step_ms());
  }
  if (report.grad_norm() != 0) grad_norms_[report.rank()] = report.grad_norm();
  if (!report.finished() && report.step_time_ms() > 0) {
    data_wait_[report.rank()] = report.data_wait_share();
  }
  skipped_samples_ = std::max(skipped_samples_, report.skipped_samples());
  if (!report.class_names().empty()) {
    class_names_.assign(report.class_names().begin(),
                        report.class_names().end());
  }
  if (report.eval_epoch() > 0) {
    Hold(report.rank(), report.eval_epoch(),
         Evaluation{report.eval_correct(), report.eval_samples(), now_ms,
                    report.eval_metrics()});
    p.set_eval_epoch(report.eval_epoch());
    p.set_eval_correct(report.eval_correct());
    p.set_eval_samples(report.eval_samples());
    *p.mutable_eval_metrics() = report.eval_metrics();
  }
  if (report.finished()) {
    p.set_final_train_loss(report.final_train_loss());
    p.set_test_correct(report.test_correct());
    p.set_test_samples(report.test_samples());
    *p.mutable_test_metrics() = report.test_metrics();
  }
  return true;
}

void ProgressAggregator::MarkGone(int32_t rank, const std::string& worker,
                                  const std::string& reason) {
  v1::RankProgress& p = ranks_[rank];
  if (p.finished()) return;
  p.set_rank(rank);
  p.set_worker_id(worker);
  p.set_gone(reason.empty() ? "gone" : reason);
}

bool ProgressAggregator::Back(int32_t rank) {
  auto it = ranks_.find(rank);
  if (it == ranks_.end() || it->second.gone().empty()) return false;
  it->second.clear_gone();
  return true;
}

std::vector<const v1::RankProgress*> ProgressAggregator::Gone(
    int32_t world_size) const {
  std::vector<const v1::RankProgress*> out;
  for (const auto& [rank, r] : ranks_) {
    if (rank < world_size && !r.gone().empty()) out.push_back(&r);
  }
  return out;
}

bool ProgressAggregator::WorkerFinished(const std::string& worker) const {
  for (const auto& [rank, r] : ranks_) {
    if (r.worker_id() == worker) return r.finished();
  }
  return false;
}

bool ProgressAggregator::AllFinished(int32_t world_size) const {
  bool some = false;
  for (int32_t rank = 0; rank < world_size; ++rank) {
    auto it = ranks_.find(rank);
    if (it == ranks_.end()) return false;
    if (!it->second.finished() && it->second.gone().empty()) return false;
    some |= it->second.finished();
  }
  return some;
}

bool ProgressAggregator::Combine(int32_t world_size, const v1::TaskSpec& task,
                                 v1::JobProgress* progress) const {
  progress->clear_ranks();
  if (ranks_.empty()) return false;
  int64_t min_step = INT64_MAX, min_epoch = INT64_MAX, total_steps = 0;
  double loss_sum = 0, rate_sum = 0, final_loss_sum = 0;
  int64_t correct = 0, samples = 0, finished = 0;
  MetricPool test;
  int64_t counted = 0;
  for (const auto& [rank, r] : ranks_) {
    *progress->add_ranks() = r;
    // A gone rank stopped where it was last heard: the job is as far as
    // the ranks that go on.
    if (!r.gone().empty()) continue;
    ++counted;
    min_step = std::min(min_step, r.step());
    min_epoch = std::min(min_epoch, r.epoch());
    total_steps = std::max(total_steps, r.total_steps());
    loss_sum += r.loss();
    if (!r.finished()) rate_sum += r.samples_per_sec();
    if (r.finished()) {
      ++finished;
      final_loss_sum += r.final_train_loss();
      // Reports are bounded (kMaxReportedCount) so these cannot pass
      // INT64_MAX; a restored state is not checked, so they saturate.
      correct = SaturatingAdd(correct, r.test_correct());
      samples = SaturatingAdd(samples, r.test_samples());
      test.AddRank(r.test_metrics());
    }
  }
  if (counted == 0) return false;
  const double n = static_cast<double>(counted);
  progress->set_step(min_step);
  progress->set_epoch(min_epoch);
  progress->set_total_steps(total_steps);
  progress->set_loss(loss_sum / n);
  progress->set_samples_per_sec(rate_sum);
  // Kept as it was until some rank of this generation measured one, so a
  // new generation (or a restarted coordinator) shows the last known norm.
  if (!grad_norms_.empty()) {
    double norm_sum = 0;
    for (const auto& [rank, norm] : grad_norms_) norm_sum += norm;
    progress->set_grad_norm(norm_sum / static_cast<double>(grad_norms_.size()));
  }
  // Both outlive the generation in the job's progress.
  progress->set_skipped_samples(
      std::max(progress->skipped_samples(), skipped_samples_));
  if (progress->class_names().empty() && !class_names_.empty()) {
    progress->mutable_class_names()->Assign(class_names_.begin(),
                                            class_names_.end());
  }
  // Final only when the whole generation is: a rank that finishes before
  // another has reported at all must not make one shard's result the job's.
  // The shards of ranks gone without their final report are not in it.
  if (finished == counted && AllFinished(world_size)) {
    progress->set_has_final_metrics(true);
    progress->set_final_train_loss(final_loss_sum / n);
    progress->set_test_accuracy(
        samples > 0 ? static_cast<double>(correct) / samples : 0.0);
    progress->clear_test_metrics();
    for (v1::Metric& m : test.Metrics(task)) {
      *progress->add_test_metrics() = std::move(m);
    }
  }
  return AddEvaluations(world_size, task, progress);
}

void ProgressAggregator::Hold(int32_t rank, int64_t epoch,
                              Evaluation evaluation) {
  std::map<int64_t, Evaluation>& held = evaluated_[rank];
  held.emplace(epoch, std::move(evaluation));  // The first arrival counts.
  while (held.size() > kMaxHeldEvaluations) held.erase(held.begin());
}

std::optional<ProgressAggregator::Evaluation> ProgressAggregator::EvaluationOf(
    const v1::RankProgress& r, int64_t epoch) const {
  if (r.finished() && epoch == r.epoch() + 1) {
    return Evaluation{r.test_correct(), r.test_samples(), r.report_time_ms(),
                      r.test_metrics()};
  }
  auto rank = evaluated_.find(r.rank());
  if (rank == evaluated_.end()) return std::nullopt;
  auto it = rank->second.find(epoch);
  if (it == rank->second.end()) return std::nullopt;
  return it->second;
}

std::vector<int64_t> ProgressAggregator::Candidates(int32_t world_size,
                                                    int64_t last) const {
  std::set<int64_t> epochs;
  for (int32_t rank = 0; rank < world_size; ++rank) {
    auto it = ranks_.find(rank);
    if (it == ranks_.end()) return {};
    const v1::RankProgress& r = it->second;
    if (!r.gone().empty()) continue;  // Its shard is missing from here on.
    if (r.finished()) epochs.insert(r.epoch() + 1);
    auto held = evaluated_.find(rank);
    if (held == evaluated_.end()) continue;
    for (const auto& [epoch, e] : held->second) {
      if (epoch > last) epochs.insert(epoch);
    }
  }
  return {epochs.begin(), epochs.end()};
}

bool ProgressAggregator::AddEvaluation(int32_t world_size, int64_t epoch,
                                       const v1::TaskSpec& task,
                                       v1::JobProgress* progress) const {
  int64_t correct = 0, samples = 0, time_ms = 0;
  MetricPool metrics;
  bool some = false;
  for (int32_t rank = 0; rank < world_size; ++rank) {
    const v1::RankProgress& r = ranks_.at(rank);  // Candidates checked.
    if (!r.gone().empty()) continue;
    std::optional<Evaluation> e = EvaluationOf(r, epoch);
    if (!e.has_value()) return false;
    some = true;
    correct = SaturatingAdd(correct, e->correct);
    samples = SaturatingAdd(samples, e->samples);
    time_ms = std::max(time_ms, e->time_ms);
    metrics.AddRank(e->metrics);
  }
  if (!some) return false;  // Every rank gone.
  v1::EpochEvaluation* ev = progress->add_evaluations();
  ev->set_epoch(epoch);
  ev->set_test_accuracy(samples > 0 ? static_cast<double>(correct) / samples
                                    : 0.0);
  ev->set_time_ms(time_ms);
  for (v1::Metric& m : metrics.Metrics(task)) *ev->add_metrics() = std::move(m);
  return true;
}

bool ProgressAggregator::AddEvaluations(int32_t world_size,
                                        const v1::TaskSpec& task,
                                        v1::JobProgress* progress) const {
  if (world_size <= 0) return false;
  const int64_t last = progress->evaluations().empty()
                           ? 0
                           : progress->evaluations().rbegin()->epoch();
  bool added = false;
  for (int64_t epoch : Candidates(world_size, last)) {
    added |= AddEvaluation(world_size, epoch, task, progress);
  }
  return added;
}

std::optional<v1::HistoryPoint> ProgressAggregator::Point(
    const v1::ReportProgressRequest& report, const v1::JobProgress& progress,
    int64_t generation, int64_t now_ms) const {
  // A training window's report: evaluations and the final report carry no
  // step time (ProgressWindow).
  if (report.rank() != 0 || report.finished() || report.step_time_ms() <= 0) {
    return std::nullopt;
  }
  v1::HistoryPoint p;
  p.set_step(report.step());
  p.set_epoch(report.epoch());
  p.set_time_ms(now_ms);
  p.set_generation(generation);
  p.set_loss(progress.loss());
  p.set_learning_rate(report.learning_rate());
  p.set_grad_norm(progress.grad_norm());
  p.set_samples_per_sec(progress.samples_per_sec());
  for (const auto& [rank, r] : ranks_) {
    if (!r.gone().empty()) continue;
    v1::RankSample* s = p.add_ranks();
    s->set_rank(rank);
    s->set_step(r.step());
    s->set_loss(r.loss());
    s->set_step_time_ms(r.step_time_ms());
    auto wait = data_wait_.find(rank);
    if (wait != data_wait_.end()) s->set_data_wait_share(wait->second);
  }
  return p;
}

void ProgressAggregator::Restore(const v1::JobProgress& progress) {
  ranks_.clear();
  grad_norms_.clear();  // The job's progress keeps the combined norm.
  data_wait_.clear();
  evaluated_.clear();  // Each rank's latest evaluation is in its progress.
  for (const v1::RankProgress& r : progress.ranks()) {
    ranks_[r.rank()] = r;
    if (r.eval_epoch() > 0) {
      Hold(r.rank(), r.eval_epoch(),
           Evaluation{r.eval_correct(), r.eval_samples(), r.report_time_ms(),
                      r.eval_metrics()});
    }
  }
}

}  // namespace ringleader
