#ifndef RINGLEADER_WORKER_TRAIN_INT64_ALL_REDUCE_H_
#define RINGLEADER_WORKER_TRAIN_INT64_ALL_REDUCE_H_

// The small agreements a generation makes when it sets up (which checkpoint
// every rank loaded, which dataset sizes every rank sees), and the batch
// balancer's every few steps (each rank's compute time and samples), are
// sums of int64 counters over the ranks, through the generation's
// communicator: exact, so every rank derives the same from them.

#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"

namespace ringleader {

// The element-wise sum of every rank's `values` (all ranks pass as many),
// all-reduced as a tensor on `device` (the communicator may be NCCL, which
// reduces device memory only). ABORTED (CollectiveFailed) when the
// collective fails.
absl::StatusOr<std::vector<int64_t>> AllReduceInt64Sum(
    Communicator& comm, const std::vector<int64_t>& values,
    const c10::Device& device);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_INT64_ALL_REDUCE_H_
