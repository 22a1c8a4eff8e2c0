#ifndef RINGLEADER_WORKER_TRAIN_DATASET_AGREEMENT_H_
#define RINGLEADER_WORKER_TRAIN_DATASET_AGREEMENT_H_

// Every rank of a generation must see the same dataset: each plans its
// shards from the split's size, so a rank with another copy (a truncated
// file, another version) would silently train on a different permutation
// and skip or repeat samples. The ranks compare their sizes with one small
// all-reduce when the generation sets up, on the data plane: the
// coordinator, which used to compare the sizes the ranks told GetShard, is
// not on the training path.

#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "worker/comm/communicator.h"

namespace ringleader {

// The sizes of one rank's splits, and how its errors name them ("train
// split of /data/x.npy").
struct SplitSizes {
  int64_t train = 0;
  int64_t test = 0;
  std::string train_name = "train split";
  std::string test_name = "test split";
};

// This rank's part of the sum: 2 * world_size counters, zero but for its
// train and test sizes at 2 * rank and 2 * rank + 1. Summed over the ranks,
// every rank's sizes.
std::vector<int64_t> DatasetSizeSlots(int32_t rank, int32_t world_size,
                                      const SplitSizes& mine);

// OK when every rank's sizes in `summed` (DatasetSizeSlots summed over the
// ranks) are the same; otherwise FAILED_PRECONDITION naming the split, the
// first two ranks that differ and the sizes they see. Every rank reaches
// the same verdict from the same sums.
absl::Status CheckDatasetSizes(const std::vector<int64_t>& summed,
                               int32_t world_size, const SplitSizes& mine);

// Both, through `comm` (a tensor on `device`): a job error (job_error.h)
// when the ranks' sizes differ, ABORTED when the collective fails.
absl::Status AgreeOnDatasetSizes(Communicator& comm, const c10::Device& device,
                                 int32_t rank, int32_t world_size,
                                 const SplitSizes& mine);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_DATASET_AGREEMENT_H_
