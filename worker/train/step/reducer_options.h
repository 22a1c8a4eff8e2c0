#ifndef RINGLEADER_WORKER_TRAIN_STEP_REDUCER_OPTIONS_H_
#define RINGLEADER_WORKER_TRAIN_STEP_REDUCER_OPTIONS_H_

#include "ringleader/v1/job.pb.h"
#include "worker/ddp/reducer.h"

namespace ringleader {

// The Reducer's options a job's `ddp` section asks for: bucket sizes (zero
// keeps DDP's defaults), overlap, gradient compression. The timeline is the
// caller's. (Buckets in flight are the communicator's: below.)
Reducer::Options ReducerOptionsFor(const v1::DdpSpec& ddp);

// What DdpSpec.buckets_in_flight means when 0: c10d's ProcessGroupGloo runs
// 2 threads. bench/README.md ("Buckets in flight") has the measurements.
inline constexpr int kDefaultBucketsInFlight = 2;

// The gradient all-reduces the job lets the communicator run at once (its
// Gloo lanes; NCCL and shared memory ignore it): the spec's value, or the
// default for 0. The communicator's, not the Reducer's: the Reducer only
// issues buckets in order and waits for each.
int BucketsInFlightFor(const v1::DdpSpec& ddp);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_STEP_REDUCER_OPTIONS_H_
