#include "worker/train/dataset_agreement.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "worker/train/int64_all_reduce.h"
#include "worker/train/job_error.h"

namespace ringleader {

std::vector<int64_t> DatasetSizeSlots(int32_t rank, int32_t world_size,
                                      const SplitSizes& mine) {
  std::vector<int64_t> slots(2 * static_cast<size_t>(world_size), 0);
  slots[2 * static_cast<size_t>(rank)] = mine.train;
  slots[2 * static_cast<size_t>(rank) + 1] = mine.test;
  return slots;
}

absl::Status CheckDatasetSizes(const std::vector<int64_t>& summed,
                               int32_t world_size, const SplitSizes& mine) {
  if (summed.size() != 2 * static_cast<size_t>(world_size)) {
    return absl::InternalError(
        absl::StrCat("dataset size agreement: ", summed.size(),
                     " sums for a world of ", world_size));
  }
  for (int split = 0; split < 2; ++split) {
    for (int32_t r = 1; r < world_size; ++r) {
      const int64_t first = summed[split];
      const int64_t other = summed[2 * static_cast<size_t>(r) + split];
      if (other == first) continue;
      return absl::FailedPreconditionError(absl::StrCat(
          "rank 0 sees ", first, " samples in its ",
          split == 0 ? mine.train_name : mine.test_name, " but rank ", r,
          " sees ", other, ": every worker needs the same dataset"));
    }
  }
  return absl::OkStatus();
}

absl::Status AgreeOnDatasetSizes(Communicator& comm, const c10::Device& device,
                                 int32_t rank, int32_t world_size,
                                 const SplitSizes& mine) {
  absl::StatusOr<std::vector<int64_t>> summed =
      AllReduceInt64Sum(comm, DatasetSizeSlots(rank, world_size, mine), device);
  if (!summed.ok()) return summed.status();
  // Retrying cannot help: every rank fails the job with the same reason.
  if (absl::Status s = CheckDatasetSizes(*summed, world_size, mine); !s.ok()) {
    return JobError(s);
  }
  return absl::OkStatus();
}

}  // namespace ringleader
