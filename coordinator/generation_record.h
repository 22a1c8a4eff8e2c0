#ifndef RINGLEADER_COORDINATOR_GENERATION_RECORD_H_
#define RINGLEADER_COORDINATOR_GENERATION_RECORD_H_

// The stored form of a live generation (v1::GenerationRecord): written when
// it forms and deleted when it ends, so that a restarted coordinator adopts
// the generation its members still train in, instead of restarting the job
// (docs/design-notes.md, "A restarted coordinator adopts the running
// generation"). Pure functions; thread-safe.

#include <string>

#include "coordinator/rendezvous.h"
#include "coordinator/worker_registry.h"
#include "ringleader/v1/state.pb.h"

namespace ringleader {

// The record of generation `gen` of `job_id`, its members indexed by rank as
// the registry knows them, each with what it must show again (its token's
// hash and certificate identity; empty for a worker no longer registered,
// which then registers again, and the adopted generation ends as if it had
// died).
v1::GenerationRecord GenerationRecordOf(const std::string& job_id,
                                        const Rendezvous::Generation& gen,
                                        const WorkerRegistry& workers);

// The generation a record describes, ranks in the record's order.
Rendezvous::Generation GenerationOf(const v1::GenerationRecord& record);

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_GENERATION_RECORD_H_
