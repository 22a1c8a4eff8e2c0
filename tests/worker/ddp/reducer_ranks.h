#ifndef RINGLEADER_TESTS_WORKER_DDP_REDUCER_RANKS_H_
#define RINGLEADER_TESTS_WORKER_DDP_REDUCER_RANKS_H_

// A small MLP trained by several ranks as threads of this process, each
// through its own Reducer over an in-process communicator, and the same
// gradients computed without one: what the reducer tests compare.

#include <torch/torch.h>

#include <vector>

#include "absl/status/status.h"
#include "tests/worker/ddp/in_process_communicator.h"
#include "worker/ddp/reducer.h"

namespace ringleader {

// Each rank's own gradients (rank r's batches only, summed over
// `micro_steps` micro-batches), parameters in registration order.
std::vector<std::vector<torch::Tensor>> PerRankGrads(int world,
                                                     int micro_steps);

// PerRankGrads averaged over ranks: what DDP gives every rank.
std::vector<torch::Tensor> ReferenceGrads(int world, int micro_steps);

struct RankResult {
  std::vector<torch::Tensor> grads;
  Reducer::Stats stats;
  size_t buckets = 0;
  absl::Status status;
  // Sequence numbers of the rank's collectives (broadcasts included) in the
  // order they completed.
  std::vector<int64_t> completion_order;
};

// Every rank, a thread, broadcasts rank 0's parameters (rank 1 and up start
// from `init_seed_rank1`'s), then runs `micro_steps` backwards, the last one
// synchronizing, through a Reducer with `options`, over communicators that
// complete collectives in `order`.
std::vector<RankResult> RunRanks(
    int world, Reducer::Options options, int micro_steps,
    int init_seed_rank1 = 7, CompletionOrder order = CompletionOrder::kIssue);

// Every gradient within 1e-6 of the reference.
void ExpectGradsNear(const std::vector<torch::Tensor>& a,
                     const std::vector<torch::Tensor>& b);

}  // namespace ringleader

#endif  // RINGLEADER_TESTS_WORKER_DDP_REDUCER_RANKS_H_
