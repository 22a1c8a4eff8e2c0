#ifndef RINGLEADER_WORKER_TRAIN_CHECKPOINT_PEER_RECOVERY_H_
#define RINGLEADER_WORKER_TRAIN_CHECKPOINT_PEER_RECOVERY_H_

// A new generation recovers from its members' memory rather than from disk
// (issue 19): the ranks exchange which step each one keeps (KeptState), and
// when the newest is at least as new as the newest checkpoint the
// coordinator offers, the lowest rank holding it broadcasts its state and
// every rank loads it. A step that was in flight when the old generation
// ended is thereby settled one way for everyone: a rank whose all-reduce of
// step q + 1 completed (it holds q + 1) brings the ranks that did not (they
// hold q) to q + 1, and the new generation goes on from q + 2 at the sample
// offset of q + 1.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"
#include "worker/model/model.h"
#include "worker/train/checkpoint/checkpointer.h"
#include "worker/train/checkpoint/kept_state.h"

namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace ringleader {

// What one rank says in the exchange: 4 slots per rank (steps + 1, so that
// 0 means "nothing kept"; payload bytes; epoch; epoch sample offset), its
// own filled, summed over ranks by an all-reduce.
std::vector<int64_t> KeptStateSlots(int rank, int world_size,
                                    const std::string& job_id,
                                    const KeptState& kept);

struct RecoverySource {
  int rank = -1;  // -1: recover from disk (or start fresh).
  int64_t bytes = 0;
  ResumePoint point;  // checkpoint_id 0.
};

// From the summed slots: the lowest rank holding the newest state, when it
// is at least `newest_offered_step` (-1: no checkpoint offered). INTERNAL
// for slots that do not add up.
absl::StatusOr<RecoverySource> ChooseRecoverySource(
    const std::vector<int64_t>& summed, int world_size,
    int64_t newest_offered_step);

// The exchange, the broadcast and the load, on every rank of `comm`. None
// when no member keeps a state as new as the newest offered checkpoint;
// else where training goes on, `model` and `optimizer` loaded. ABORTED when
// a collective fails (the caller rejoins, its KeptState untouched).
// `before_broadcast`, when set, runs on this rank after the exchange chose a
// member's state and before it is broadcast: a fault-injection point for
// tests (a member that dies in the middle of a recovery).
absl::StatusOr<std::optional<ResumePoint>> RecoverFromPeers(
    const std::string& job_id, const KeptState& kept,
    int64_t newest_offered_step, Model& model,
    torch::optim::Optimizer& optimizer, Communicator& comm,
    const c10::Device& device,
    const std::function<void()>& before_broadcast = nullptr);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_CHECKPOINT_PEER_RECOVERY_H_
