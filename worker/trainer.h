#ifndef RINGLEADER_WORKER_TRAINER_H_
#define RINGLEADER_WORKER_TRAINER_H_

#include <atomic>
#include <string>

#include "absl/status/status.h"
#include "ringleader/v1/worker_service.pb.h"
#include "worker/comm/communicator.h"
#include "worker/coordinator_client.h"
#include "worker/job_data.h"
#include "worker/worker_metrics.h"

namespace ringleader {

// What one rank needs to train one generation of a job.
struct TrainerEnv {
  CoordinatorClient* client = nullptr;
  Communicator* comm = nullptr;
  const JobData* data = nullptr;
  std::string device = "cpu";  // "cpu" or "cuda:N".
  // Set by the heartbeat thread when the coordinator ends the generation.
  const std::atomic<bool>* aborted = nullptr;
  // Step time, samples/s, all-reduce bytes and time, progress; may be null.
  WorkerMetrics* metrics = nullptr;
};

// Trains one generation of a job on one rank, the way a DDP training script
// does: the model built from the same seed everywhere and broadcast from rank
// 0 (or loaded from the committed checkpoint), the coordinator's shard of
// every epoch, forward, loss, backward with the Reducer all-reducing buckets
// as they fill, optimizer step, progress reports every N steps, checkpoints
// (rank 0, atomically, committed to the coordinator) every K steps and at
// epoch end, and finally the test split evaluated and reported.
//
// Returns OK when the job is done on this rank, ABORTED when the generation
// ended under it (the caller rejoins), another error otherwise.
// Not thread-safe: one trainer per generation, on one thread.
class Trainer {
 public:
  Trainer(TrainerEnv env, std::string job_id,
          v1::JoinRendezvousResponse generation);
  absl::Status Run();

 private:
  TrainerEnv env_;
  std::string job_id_;
  v1::JoinRendezvousResponse gen_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAINER_H_
