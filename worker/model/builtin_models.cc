#include "worker/model/builtin_models.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/const_init.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "worker/model/model.h"
#include "worker/model/torch_status.h"

namespace ringleader {
namespace {

constexpr int kMaxHiddenLayers = 16;
constexpr int64_t kImageNumel = kImageChannels * kImageSize * kImageSize;

// torch's default generator is process-wide; seeding it and drawing the
// initial weights must not interleave with another build.
ABSL_CONST_INIT absl::Mutex g_init_mu(absl::kConstInit);

class MlpImpl : public torch::nn::Module {
 public:
  explicit MlpImpl(const std::vector<int64_t>& hidden_sizes) {
    int64_t in = kImageNumel;
    for (size_t i = 0; i <= hidden_sizes.size(); ++i) {
      const int64_t out =
          i < hidden_sizes.size() ? hidden_sizes[i] : kNumClasses;
      layers_.push_back(
          register_module(absl::StrCat("fc", i), torch::nn::Linear(in, out)));
      in = out;
    }
  }

  at::Tensor forward(const at::Tensor& images) {
    at::Tensor x = images.flatten(1);
    for (size_t i = 0; i < layers_.size(); ++i) {
      x = layers_[i]->forward(x);
      if (i + 1 < layers_.size()) x = x.relu();
    }
    return x;
  }

 private:
  std::vector<torch::nn::Linear> layers_;
};

// LeNet-like rather than PyTorch's MNIST example (conv 32/64 3x3, fc 9216):
// that one costs about 35 M multiply-adds per sample forward and backward,
// 365-550 samples/s on one CPU core here, too slow to train or test on CPU.
class CnnImpl : public torch::nn::Module {
 public:
  CnnImpl()
      : conv1_(register_module("conv1", torch::nn::Conv2d(1, 16, 5))),
        conv2_(register_module("conv2", torch::nn::Conv2d(16, 32, 5))),
        fc1_(register_module("fc1", torch::nn::Linear(32 * 4 * 4, 128))),
        fc2_(register_module("fc2", torch::nn::Linear(128, kNumClasses))) {}

  at::Tensor forward(const at::Tensor& images) {
    // 28x28 -> conv 24x24 -> pool 12x12 -> conv 8x8 -> pool 4x4. ReLU comes
    // after each pooling rather than before: ReLU is monotone, so
    // relu(maxpool(x)) == maxpool(relu(x)) with the same gradients, and it
    // then touches a quarter of the elements.
    at::Tensor x = ChannelsLastOnCpu(images);
    x = at::max_pool2d(conv1_->forward(x), {2, 2}).relu();
    x = at::max_pool2d(conv2_->forward(x), {2, 2}).relu().flatten(1);
    x = fc1_->forward(x).relu();
    return fc2_->forward(x);
  }

 private:
  torch::nn::Conv2d conv1_;
  torch::nn::Conv2d conv2_;
  torch::nn::Linear fc1_;
  torch::nn::Linear fc2_;
};

// Adapts a torch::nn module with `at::Tensor forward(const at::Tensor&)`.
template <typename Impl>
class NnModel final : public Model {
 public:
  NnModel(std::shared_ptr<Impl> module, std::string description)
      : module_(std::move(module)), description_(std::move(description)) {}

  std::vector<NamedTensor> NamedParameters() const override {
    std::vector<NamedTensor> out;
    for (const auto& item : module_->named_parameters(/*recurse=*/true)) {
      out.push_back({item.key(), item.value()});
    }
    return out;
  }
  std::vector<NamedTensor> NamedBuffers() const override {
    std::vector<NamedTensor> out;
    for (const auto& item : module_->named_buffers(/*recurse=*/true)) {
      out.push_back({item.key(), item.value()});
    }
    return out;
  }
  void Train(bool on) override { module_->train(on); }
  bool is_training() const override { return module_->is_training(); }
  absl::Status To(const c10::Device& device) override {
    try {
      module_->to(device);
    } catch (const std::exception& e) {
      return TorchErrorToStatus(
          absl::StatusCode::kFailedPrecondition,
          absl::StrCat(description_, ": moving to ", device.str()), e);
    }
    return absl::OkStatus();
  }
  std::string Describe() const override { return description_; }

 protected:
  absl::StatusOr<at::Tensor> ForwardUnchecked(
      const at::Tensor& images) override {
    return module_->forward(images);
  }

 private:
  std::shared_ptr<Impl> module_;
  const std::string description_;
};

// Seeds torch and constructs, with torch's exceptions (allocation) caught.
template <typename Impl, typename... Args>
absl::StatusOr<std::unique_ptr<Model>> Build(uint64_t seed,
                                             std::string description,
                                             Args&&... args) {
  absl::MutexLock lock(&g_init_mu);
  try {
    torch::manual_seed(seed);
    auto module = std::make_shared<Impl>(std::forward<Args>(args)...);
    return std::unique_ptr<Model>(std::make_unique<NnModel<Impl>>(
        std::move(module), std::move(description)));
  } catch (const std::exception& e) {
    return TorchErrorToStatus(absl::StatusCode::kResourceExhausted,
                              absl::StrCat("building ", description), e);
  }
}

}  // namespace

// The whole CNN step is 1.3-1.7x faster this way at batch 42..512 on one
// thread (bench/README.md): LibTorch 1.13's NCHW max_pool2d is a scalar
// loop. GPUs keep NCHW, cuDNN's fp32 layout.
at::Tensor ChannelsLastOnCpu(const at::Tensor& images) {
  if (!images.is_cpu() || images.dim() != 4) return images;
  if (images.size(1) == 1 && images.is_contiguous()) {
    const int64_t h = images.size(2), w = images.size(3);
    return images.as_strided(images.sizes(), {h * w, 1, w, 1});
  }
  return images.contiguous(at::MemoryFormat::ChannelsLast);
}

absl::StatusOr<std::unique_ptr<Model>> MakeMlp(
    const std::vector<int64_t>& hidden_sizes, uint64_t seed) {
  if (hidden_sizes.size() > kMaxHiddenLayers) {
    return absl::InvalidArgumentError(
        absl::StrCat("MLP: at most ", kMaxHiddenLayers, " hidden layers, got ",
                     hidden_sizes.size()));
  }
  int64_t params = 0;
  int64_t in = kImageNumel;
  for (size_t i = 0; i <= hidden_sizes.size(); ++i) {
    const int64_t out = i < hidden_sizes.size() ? hidden_sizes[i] : kNumClasses;
    if (out < 1 || out > kMaxBuiltinParameters) {
      return absl::InvalidArgumentError(
          absl::StrCat("MLP: hidden layer ", i, " width must be in [1, ",
                       kMaxBuiltinParameters, "], got ", out));
    }
    // Both factors are <= 2^28, so the product fits in 64 bits.
    params += in * out + out;
    if (params > kMaxBuiltinParameters) {
      return absl::InvalidArgumentError(
          absl::StrCat("MLP: more than ", kMaxBuiltinParameters,
                       " parameters with hidden sizes [",
                       absl::StrJoin(hidden_sizes, ", "), "]"));
    }
    in = out;
  }
  const std::string description =
      absl::StrCat("mlp ", kImageNumel, "-",
                   hidden_sizes.empty()
                       ? ""
                       : absl::StrCat(absl::StrJoin(hidden_sizes, "-"), "-"),
                   kNumClasses);
  return Build<MlpImpl>(seed, description, hidden_sizes);
}

absl::StatusOr<std::unique_ptr<Model>> MakeCnn(uint64_t seed) {
  return Build<CnnImpl>(seed, "cnn conv16-pool-conv32-pool-fc128-fc10");
}

}  // namespace ringleader
