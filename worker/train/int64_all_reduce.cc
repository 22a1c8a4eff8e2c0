#include "worker/train/int64_all_reduce.h"

#include <torch/torch.h>

#include "worker/ddp/collective_stream.h"
#include "worker/train/job_error.h"

namespace ringleader {

absl::StatusOr<std::vector<int64_t>> AllReduceInt64Sum(
    Communicator& comm, const std::vector<int64_t>& values,
    const c10::Device& device) {
  torch::Tensor sums =
      torch::tensor(values, torch::dtype(torch::kInt64)).to(device);
  RecordForCollective(sums, comm);
  if (absl::Status s = comm.AllReduceSum(
          sums.data_ptr(), static_cast<size_t>(sums.numel()), DataType::kInt64);
      !s.ok()) {
    return CollectiveFailed(s);
  }
  sums = sums.cpu();
  return std::vector<int64_t>(sums.data_ptr<int64_t>(),
                              sums.data_ptr<int64_t>() + sums.numel());
}

}  // namespace ringleader
