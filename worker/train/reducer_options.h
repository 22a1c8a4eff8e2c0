#ifndef RINGLEADER_WORKER_TRAIN_REDUCER_OPTIONS_H_
#define RINGLEADER_WORKER_TRAIN_REDUCER_OPTIONS_H_

#include "ringleader/v1/job.pb.h"
#include "worker/ddp/reducer.h"

namespace ringleader {

// The Reducer's options a job's `ddp` section asks for: bucket sizes (zero
// keeps DDP's defaults), overlap, gradient compression. The timeline is the
// caller's.
Reducer::Options ReducerOptionsFor(const v1::DdpSpec& ddp);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_REDUCER_OPTIONS_H_
