#ifndef RINGLEADER_COORDINATOR_GENERATION_WATCHERS_H_
#define RINGLEADER_COORDINATOR_GENERATION_WATCHERS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// The members waiting to hear that their generation ended
// (WorkerService.WatchGeneration): the coordinator tells them the moment it
// ends a generation (a member gone, a hung verdict, a scale-up) or the job
// finishes, instead of at their next heartbeat.
//
// At most one watch per worker: a new one replaces the worker's older one,
// which is answered ALREADY_EXISTS (a worker that reconnects does not leave
// a stale stream behind, and no worker holds more than one). Each watch is
// answered exactly once: the event, an error, or nothing when withdrawn
// with Unwatch. Answers run on the thread that ended the generation (or
// that replaced the watch), never under the registry's lock. Thread-safe.
class GenerationWatchers {
 public:
  // The watched generation ended (the event), or the watch ended without
  // one (an error status).
  using Answer = std::function<void(absl::StatusOr<v1::GenerationEvent>)>;

  // Registers `answer` for `generation` of `job_id`; returns the watch's id
  // for Unwatch. The caller then checks that the generation is still live
  // and calls Ended itself if not: an end that happened before the watch was
  // registered finds no watch.
  uint64_t Watch(const std::string& worker_id, const std::string& job_id,
                 int64_t generation, Answer answer);
  // Withdraws watch `id` of `worker_id` (its call was cancelled) without
  // answering it; nothing if it was answered already.
  void Unwatch(const std::string& worker_id, uint64_t id);

  // Generation `generation` of `job_id` ended: answers every watch of the
  // job for it or an older one. `rejoin`: the job goes on.
  // `preempt_window_ms` > 0: not an end but a preemption's notice
  // (GenerationAbort.preempt_window_ms).
  void Ended(const std::string& job_id, int64_t generation,
             const std::string& reason, bool rejoin,
             int64_t preempt_window_ms = 0);
  // The job finished: answers every watch of the job (rejoin false).
  void JobFinished(const std::string& job_id, const std::string& reason);

  // Ends every watch with `status` (the coordinator is stopping: its
  // server would otherwise wait for open streams until its deadline).
  void CloseAll(const absl::Status& status);

  // Watches open now.
  int64_t Size() const;
  // Waits until `worker_id` has a watch (false after `timeout`): a test
  // knows the stream it opened is registered.
  bool AwaitWatching(const std::string& worker_id, absl::Duration timeout);
  // Waits until at most `n` watches are open (false after `timeout`): a
  // test sees a cancelled call's watch withdrawn.
  bool AwaitSizeAtMost(int64_t n, absl::Duration timeout);

 private:
  struct Entry {
    uint64_t id = 0;
    std::string job_id;
    int64_t generation = 0;
    Answer answer;
  };

  using JobWatches = absl::flat_hash_map<std::string, Entry>;  // By worker.

  // Takes out every watch of `job_id` for `generation` or older (all of
  // the job's when generation is INT64_MAX).
  std::vector<Entry> TakeLocked(const std::string& job_id, int64_t generation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes out the watch of `worker_id` (any id when `id` is 0).
  std::optional<Entry> TakeWorkerLocked(const std::string& worker_id,
                                        uint64_t id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void AnswerAll(std::vector<Entry> entries, const std::string& reason,
                        bool rejoin, int64_t preempt_window_ms = 0);

  mutable absl::Mutex mu_;
  // By job, then by worker; job_of_ says where each worker's watch is, so a
  // generation's end touches only its own job's watches.
  absl::flat_hash_map<std::string, JobWatches> by_job_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> job_of_ ABSL_GUARDED_BY(mu_);
  int64_t size_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_GENERATION_WATCHERS_H_
