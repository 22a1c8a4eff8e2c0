#ifndef RINGLEADER_COORDINATOR_SCHEDULER_PLAN_H_
#define RINGLEADER_COORDINATOR_SCHEDULER_PLAN_H_

// What the scheduler decided: moves for the assigner to carry out, and why
// each job that still waits does.

#include <cstdint>
#include <string>
#include <vector>

namespace ringleader::scheduler {

enum class Move {
  kAdmit,    // Start a waiting job on `workers` workers.
  kGrow,     // Give a running job workers, up to `workers` in all.
  kShrink,   // Let ranks of a running job go at a step boundary, down to
             // `workers`; the others go on from memory, losing no step.
  kPreempt,  // Stop a whole job at its last step (checkpoint, PREEMPTED);
             // it waits again and resumes when room returns.
};

struct Decision {
  Move move;
  std::string job_id;
  int32_t workers = 0;  // The job's size after the move (0: preempted).
  std::string reason;   // For the job's generation history.
};

struct WaitingJob {
  std::string job_id;
  std::string why;  // "needs 4 workers, 2 free, 3 jobs of higher ..."
};

struct Plan {
  // Shrinks and preemptions come before the admission they make room for.
  std::vector<Decision> decisions;
  // The jobs left waiting, in the order they will be considered.
  std::vector<WaitingJob> waiting;
};

}  // namespace ringleader::scheduler

#endif  // RINGLEADER_COORDINATOR_SCHEDULER_PLAN_H_
