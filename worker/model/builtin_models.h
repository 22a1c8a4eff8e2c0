#ifndef RINGLEADER_WORKER_MODEL_BUILTIN_MODELS_H_
#define RINGLEADER_WORKER_MODEL_BUILTIN_MODELS_H_

// The models Ringleader ships, as torch::nn modules, for float image
// inputs of any size (ModelShape: 28x28 grey and 10 classes by default). Both
// are deterministic: no dropout, and initialization from torch's default CPU
// generator seeded with `seed`, in the order a Python script would construct
// the same layers (so `torch.manual_seed(seed)` + the same nn.Linear/nn.Conv2d
// sequence in Python gives bit-identical initial weights).
//
// Construction seeds torch's process-wide generator, so these functions
// serialize on a process-wide mutex: concurrent builds in one process stay
// deterministic. Thread-safe in that sense; the models themselves are not.

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/model/model.h"

namespace ringleader {

// The largest model built here: 2^28 parameters (1 GiB of float32); a
// larger request is a mistake in the spec, not something to try to allocate.
inline constexpr int64_t kMaxBuiltinParameters = int64_t{1} << 28;

// flatten (784 for 1x28x28) -> hidden_sizes[0] -> ... -> num_classes, ReLU
// between layers; layers named fc0, fc1, ... (empty `hidden_sizes`: one
// linear layer, fc0). InvalidArgument when a width or the shape is < 1,
// there are more than 16 hidden layers, or the model exceeds
// kMaxBuiltinParameters.
absl::StatusOr<std::unique_ptr<Model>> MakeMlp(
    const std::vector<int64_t>& hidden_sizes, uint64_t seed,
    const ModelShape& shape = {});

// A small LeNet-style CNN: conv1 (C->16, 5x5) - ReLU - max-pool 2 -
// conv2 (16->32, 5x5) - ReLU - max-pool 2 - flatten (512 for 28x28) - fc1
// (->128) - ReLU - fc2 (->num_classes). For 1x28x28 and 10 classes, 80,202
// parameters, about 1.1 M multiply-adds per image forward (PyTorch's MNIST
// example CNN needs ten times that and trains at a few hundred samples/s per
// CPU core). InvalidArgument unless the input is [C, H, W] with H and W of at
// least 16 (two 5x5 convolutions and poolings).
// On CPU it runs channels-last, with ReLU after each pooling (the same
// values and gradients; see worker/model/channels_last.h).
absl::StatusOr<std::unique_ptr<Model>> MakeCnn(uint64_t seed,
                                               const ModelShape& shape = {});

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_MODEL_BUILTIN_MODELS_H_
