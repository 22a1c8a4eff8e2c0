// The CUDA backend of a build whose LibTorch has no CUDA (Debian's, by
// default): every GPU request fails with how to get one.
#include "absl/strings/str_cat.h"
#include "worker/device/cuda_backend.h"

namespace ringleader {
namespace {

absl::Status Unavailable(int index) {
  return absl::FailedPreconditionError(absl::StrCat(
      "cuda:", index,
      " needs a build with a CUDA LibTorch: build with "
      "RINGLEADER_LIBTORCH=/path/to/libtorch (see the README, GPU workers); "
      "this one trains on cpu only"));
}

}  // namespace

absl::Status CheckCudaDevice(int index) { return Unavailable(index); }

absl::Status CheckCudaBf16(int index) { return Unavailable(index); }

absl::StatusOr<std::unique_ptr<Communicator>> CreateCudaCommunicator(
    const CommunicatorRequest& request) {
  return Unavailable(request.device.index);
}

absl::StatusOr<std::unique_ptr<Communicator>> CreateCudaCommunicatorWithId(
    const std::string& unique_id, const CommunicatorRequest& request) {
  return Unavailable(request.device.index);
}

}  // namespace ringleader
