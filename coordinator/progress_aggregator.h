#ifndef RINGLEADER_COORDINATOR_PROGRESS_AGGREGATOR_H_
#define RINGLEADER_COORDINATOR_PROGRESS_AGGREGATOR_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ringleader/v1/history.pb.h"
#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// Combines the ranks' progress reports of one generation into the job's
// progress: the job is as far as its slowest rank, its loss and gradient
// norm are the ranks' means, its throughput their sum, and its test
// accuracy and every metric of
// the job's task are pooled over all ranks' test shards
// (common/eval_metrics.h). Not thread-safe: owned by JobManager under its
// lock.
class ProgressAggregator {
 public:
  void Reset() {
    ranks_.clear();
    grad_norms_.clear();
    data_wait_.clear();
    evaluated_.clear();
  }
  // Records `report` of `worker`; false (nothing changes) for a stale
  // one: a report of a lower step than the rank's last, or a non-final one
  // after the rank's final report. A partition can hold a report back and
  // deliver it after newer ones (gRPC judges a request's deadline from its
  // arrival), and the worker has moved on: it never undoes what came after
  // it (docs/design-notes.md, "Verdicts after a heal").
  bool Add(const v1::ReportProgressRequest& report, const std::string& worker,
           int64_t now_ms);
  // Rank `rank` (worker `worker`) left a generation that trained to its
  // last step without its final report, for `reason`: the job finishes
  // without it (RankProgress.gone). A final report of the rank that comes
  // after all the same counts.
  void MarkGone(int32_t rank, const std::string& worker,
                const std::string& reason);
  // Rank `rank` is not gone after all; whether it was.
  bool Back(int32_t rank);
  // True if `worker` sent its final report in this generation.
  bool WorkerFinished(const std::string& worker) const;
  // True once every rank in [0, world_size) has sent its final report or
  // is gone, and at least one sent it.
  bool AllFinished(int32_t world_size) const;
  // The ranks in [0, world_size) that are gone, in rank order.
  std::vector<const v1::RankProgress*> Gone(int32_t world_size) const;
  // Writes the combined view into `progress` (ranks in rank order), with
  // the test metrics once every rank finished. For each epoch after the
  // last in `progress->evaluations()` that every rank in [0, world_size)
  // has evaluated (or has finished after: the final evaluation), in epoch
  // order, appends its evaluation with its metrics; returns true if it
  // appended one, so the caller persists the job. A rank's evaluations are
  // held until then: ranks queue theirs through a coordinator outage and
  // each rank's arrive in order, but one rank's second may come before
  // another's first. `task` (the job's) says which metrics are derived.
  bool Combine(int32_t world_size, const v1::TaskSpec& task,
               v1::JobProgress* progress) const;
  // The job's history point (coordinator/job_history.h) for `report`, just
  // added, with `progress` Combine's view after it: one per training
  // report of rank 0 (not an evaluation's or the final one, which repeat a
  // step with the epoch's loss), at rank 0's step, with its learning rate,
  // the job's loss, gradient norm and samples/s, and every rank's latest
  // step time and data-wait share. nullopt for any other report. Rank 0
  // sets the cadence, not "a step every rank reported": ranks report on a
  // time interval of their own and a queued report is replaced by a newer
  // one, so a step all ranks reported may never come.
  std::optional<v1::HistoryPoint> Point(const v1::ReportProgressRequest& report,
                                        const v1::JobProgress& progress,
                                        int64_t generation,
                                        int64_t now_ms) const;
  // Takes the ranks back from a combined view (the stored job, after a
  // coordinator restart), so final reports sent before it still count.
  void Restore(const v1::JobProgress& progress);

 private:
  // One rank's evaluation of one epoch: its test shard's sums.
  struct Evaluation {
    int64_t correct = 0;
    int64_t samples = 0;
    int64_t time_ms = 0;  // When it arrived.
    google::protobuf::RepeatedPtrField<v1::MetricSum> metrics;
  };
  // Evaluations held per rank: far more epochs than ranks drift apart.
  static constexpr size_t kMaxHeldEvaluations = 16;

  void Hold(int32_t rank, int64_t epoch, Evaluation evaluation);
  // Rank `r`'s evaluation of `epoch` (1-based), nullopt if it has none: a
  // finished rank's final result is the evaluation after its last epoch.
  std::optional<Evaluation> EvaluationOf(const v1::RankProgress& r,
                                         int64_t epoch) const;
  // The epochs after `last` that some rank in [0, world_size) evaluated,
  // ascending; empty while a rank has not reported.
  std::vector<int64_t> Candidates(int32_t world_size, int64_t last) const;
  // Appends every epoch's evaluation that is complete, in epoch order.
  bool AddEvaluations(int32_t world_size, const v1::TaskSpec& task,
                      v1::JobProgress* progress) const;
  // Appends `epoch`'s evaluation if every rank that is not gone has one.
  bool AddEvaluation(int32_t world_size, int64_t epoch,
                     const v1::TaskSpec& task, v1::JobProgress* progress) const;

  // Each rank's evaluations by epoch, the latest kMaxHeldEvaluations.
  std::map<int32_t, std::map<int64_t, Evaluation>> evaluated_;

  std::map<int32_t, v1::RankProgress> ranks_;
  // Each rank's latest gradient norm (RankProgress has no field for it);
  // ranks that have not measured one yet are not in it.
  std::map<int32_t, double> grad_norms_;
  // Each rank's latest data-wait share (RankProgress has no field for it).
  std::map<int32_t, double> data_wait_;
  // The largest skipped-sample count any rank reported, and the class
  // names rank 0 sent (kept by Combine in the job's progress).
  int64_t skipped_samples_ = 0;
  std::vector<std::string> class_names_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_PROGRESS_AGGREGATOR_H_
