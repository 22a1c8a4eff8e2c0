#include "worker/train/checkpoint/peer_recovery.h"

#include <torch/torch.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "worker/ddp/collective_stream.h"
#include "worker/train/int64_all_reduce.h"
#include "worker/train/job_error.h"

namespace ringleader {
namespace {

constexpr int kSlots = 4;  // step + 1, bytes, epoch, offset.

// The payload of `root` on every rank, through a byte tensor on `device`
// (NCCL broadcasts device memory only).
absl::StatusOr<std::string> BroadcastPayload(Communicator& comm,
                                             const c10::Device& device,
                                             const std::string& mine,
                                             int64_t bytes, int root) {
  torch::Tensor buffer =
      torch::empty({bytes}, torch::dtype(torch::kUInt8).device(torch::kCPU));
  if (comm.rank() == root) {
    std::memcpy(buffer.data_ptr(), mine.data(), static_cast<size_t>(bytes));
  }
  buffer = buffer.to(device);
  RecordForCollective(buffer, comm);
  if (absl::Status s =
          comm.Broadcast(buffer.data_ptr(), static_cast<size_t>(bytes), root);
      !s.ok()) {
    return CollectiveFailed(s);
  }
  buffer = buffer.cpu();
  return std::string(static_cast<const char*>(buffer.data_ptr()),
                     static_cast<size_t>(bytes));
}

}  // namespace

std::vector<int64_t> KeptStateSlots(int rank, int world_size,
                                    const std::string& job_id,
                                    const KeptState& kept) {
  std::vector<int64_t> slots(static_cast<size_t>(kSlots * world_size), 0);
  if (!kept.HoldsJob(job_id)) return slots;
  int64_t* mine = &slots[static_cast<size_t>(kSlots * rank)];
  mine[0] = kept.position.step + 1;
  mine[1] = static_cast<int64_t>(kept.payload.size());
  mine[2] = kept.position.epoch;
  mine[3] = kept.epoch_sample_offset;
  return slots;
}

absl::StatusOr<RecoverySource> ChooseRecoverySource(
    const std::vector<int64_t>& summed, int world_size,
    int64_t newest_offered_step) {
  if (summed.size() != static_cast<size_t>(kSlots * world_size)) {
    return absl::InternalError(
        absl::StrCat("kept-state exchange has ", summed.size(),
                     " slots for world size ", world_size));
  }
  RecoverySource best;
  int64_t best_step = -1;
  for (int r = 0; r < world_size; ++r) {
    const int64_t* slot = &summed[static_cast<size_t>(kSlots * r)];
    if (slot[0] < 0 || slot[1] < 0 || slot[2] < 0 || slot[3] < 0 ||
        (slot[0] > 0 && slot[1] == 0)) {
      return absl::InternalError(
          absl::StrCat("rank ", r, " sent a malformed kept state"));
    }
    // Strictly newer: the lowest rank wins a tie.
    if (slot[0] - 1 > best_step) {
      best_step = slot[0] - 1;
      best.rank = r;
      best.bytes = slot[1];
      best.point.position = {slot[2], best_step};
      best.point.epoch_sample_offset = slot[3];
    }
  }
  // A checkpoint newer than every member's memory (the members are new, or
  // they kept nothing): disk. Equal: memory, no file read.
  if (best_step < 0 || best_step < newest_offered_step) return RecoverySource();
  return best;
}

absl::StatusOr<std::optional<ResumePoint>> RecoverFromPeers(
    const std::string& job_id, const KeptState& kept,
    int64_t newest_offered_step, Model& model,
    torch::optim::Optimizer& optimizer, Communicator& comm,
    const c10::Device& device, const std::function<void()>& before_broadcast) {
  const int world = comm.world_size();
  absl::StatusOr<std::vector<int64_t>> summed = AllReduceInt64Sum(
      comm, KeptStateSlots(comm.rank(), world, job_id, kept), device);
  if (!summed.ok()) return summed.status();
  absl::StatusOr<RecoverySource> source =
      ChooseRecoverySource(*summed, world, newest_offered_step);
  if (!source.ok()) return source.status();
  if (source->rank < 0) return std::nullopt;
  if (before_broadcast) before_broadcast();
  absl::StatusOr<std::string> payload =
      BroadcastPayload(comm, device, kept.payload, source->bytes, source->rank);
  if (!payload.ok()) return payload.status();
  // Every rank loads the same bytes, the source too (its trainer built a
  // fresh model): the replicas are equal bit for bit.
  absl::StatusOr<CheckpointPosition> loaded = LoadCheckpointPayload(
      *payload, absl::StrCat("the state rank ", source->rank, " kept"), model,
      &optimizer);
  if (!loaded.ok()) return loaded.status();
  if (loaded->step != source->point.position.step) {
    return absl::InternalError(absl::StrCat(
        "the state rank ", source->rank, " kept is at step ", loaded->step,
        ", not the step ", source->point.position.step, " it announced"));
  }
  LOG(INFO) << "rank " << comm.rank() << " recovers from rank " << source->rank
            << "'s memory at epoch " << source->point.position.epoch << " step "
            << source->point.position.step << " offset "
            << source->point.epoch_sample_offset << " (" << source->bytes
            << " bytes; newest checkpoint offered: step " << newest_offered_step
            << ")";
  return source->point;
}

}  // namespace ringleader
