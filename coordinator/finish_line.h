#ifndef RINGLEADER_COORDINATOR_FINISH_LINE_H_
#define RINGLEADER_COORDINATOR_FINISH_LINE_H_

// Whether every member of a job's live generation reached the planned last
// optimizer step, from what the coordinator hears of each: the step in its
// heartbeats and progress reports, and the plan's length from the reports
// (ReportProgressRequest.total_steps). Ranks run in lockstep, so a member
// at the last step trained to the end; what is left is its evaluation and
// its final report, which a partition may hold back long after the steps
// themselves were heard (docs/design-notes.md, "Verdicts after a heal").
//
// Keeps the books only; never calls other managers. Thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace ringleader {

class FinishLine {
 public:
  // Generation `number` of `job_id` formed (or was adopted) with these
  // members; it replaces the job's previous one.
  void StartGeneration(const std::string& job_id, int64_t number,
                       const std::vector<std::string>& members);
  // The job is over.
  void EndJob(const std::string& job_id);
  // `worker_id` of generation `generation` completed optimizer step `step`;
  // `total_steps` is the plan's length when the caller knows it (0: not
  // said). True exactly once: when this makes every member reach the last
  // step. Ignored for a generation that is not the job's current one.
  bool Reached(const std::string& job_id, int64_t generation,
               const std::string& worker_id, int64_t step,
               int64_t total_steps = 0);

 private:
  struct Generation {
    int64_t number = 0;
    int64_t total_steps = 0;                          // 0 until a report says.
    absl::flat_hash_map<std::string, int64_t> steps;  // By member.
    bool crossed = false;
  };
  static bool AllAtTheEnd(const Generation& g);

  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Generation> jobs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_FINISH_LINE_H_
