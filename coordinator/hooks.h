#ifndef RINGLEADER_COORDINATOR_HOOKS_H_
#define RINGLEADER_COORDINATOR_HOOKS_H_

// What the call handlers and the lease sweep tell the Coordinator, which
// tells every manager concerned (managers never call each other; after
// Ray's GCS listeners). The Coordinator sets them at construction.

#include <cstdint>
#include <functional>
#include <string>

#include "ringleader/v1/user_service.pb.h"

namespace ringleader {

// A worker is gone: it left, its lease lapsed and the evidence agrees, its
// watch stream closed with its process, or a new registration of its
// process replaced it. `reason` ends up in the logs and the job's message.
using WorkerGoneHook = std::function<void(const v1::WorkerInfo& worker,
                                          const std::string& reason)>;

// A member of generation `generation` of `job_id` was heard at optimizer
// step `step`; `total_steps` is the plan's length when the message said it
// (0: not said).
using StepHook = std::function<void(
    const std::string& job_id, int64_t generation, const std::string& worker_id,
    int64_t step, int64_t total_steps)>;

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_HOOKS_H_
