#include "worker/model/builtin_models.h"

#include <torch/csrc/jit/api/module.h>
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
#include "worker/model/channels_last.h"
#include "worker/model/model.h"
#include "worker/model/script_module.h"
#include "worker/model/torch_status.h"

namespace ringleader {
namespace {

constexpr int kMaxHiddenLayers = 16;

int64_t Numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// The TorchScript source of `x = torch.addmm(b, x, w.t())` for layer `name`
// (addmm: the C++ frontend's compiler resolves aten ops by their torch.*
// names, and torch.nn.functional.linear is not one of them).
std::string ScriptLinear(const std::string& name) {
  return absl::StrCat("torch.addmm(self.", name, ".bias, x, self.", name,
                      ".weight.t())");
}

// torch's default generator is process-wide; seeding it and drawing the
// initial weights must not interleave with another build.
ABSL_CONST_INIT absl::Mutex g_init_mu(absl::kConstInit);

class MlpImpl : public torch::nn::Module {
 public:
  MlpImpl(const std::vector<int64_t>& hidden_sizes, const ModelShape& shape) {
    int64_t in = Numel(shape.input_dims);
    for (size_t i = 0; i <= hidden_sizes.size(); ++i) {
      const int64_t out =
          i < hidden_sizes.size() ? hidden_sizes[i] : shape.num_classes;
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

  // The same forward in TorchScript, for export.
  std::string ScriptForward() const {
    std::string src = "def forward(self, x):\n    x = torch.flatten(x, 1)\n";
    for (size_t i = 0; i < layers_.size(); ++i) {
      const std::string layer = ScriptLinear(absl::StrCat("fc", i));
      absl::StrAppend(&src, "    x = ",
                      i + 1 < layers_.size()
                          ? absl::StrCat("torch.relu(", layer, ")")
                          : layer,
                      "\n");
    }
    return src + "    return x\n";
  }

 private:
  std::vector<torch::nn::Linear> layers_;
};

// LeNet-like rather than PyTorch's MNIST example (conv 32/64 3x3, fc 9216):
// that one costs about 35 M multiply-adds per sample forward and backward,
// 365-550 samples/s on one CPU core here, too slow to train or test on CPU.
class CnnImpl : public torch::nn::Module {
 public:
  // `shape.input_dims` is [C, H, W] with H, W >= 16 (MakeCnn checks).
  explicit CnnImpl(const ModelShape& shape)
      : conv1_(register_module("conv1",
                               torch::nn::Conv2d(shape.input_dims[0], 16, 5))),
        conv2_(register_module("conv2", torch::nn::Conv2d(16, 32, 5))),
        fc1_(register_module(
            "fc1", torch::nn::Linear(32 * PooledSize(shape.input_dims[1]) *
                                         PooledSize(shape.input_dims[2]),
                                     128))),
        fc2_(register_module("fc2",
                             torch::nn::Linear(128, shape.num_classes))) {}

  // A side of the feature map after conv 5 - pool 2 - conv 5 - pool 2.
  static int64_t PooledSize(int64_t side) { return ((side - 4) / 2 - 4) / 2; }

  // The same values in TorchScript, for export: NCHW and ReLU before
  // pooling, the textbook order a Python user's CNN has.
  static std::string ScriptForward() {
    return "def forward(self, x):\n"
           "    x = torch.max_pool2d(torch.relu(torch.conv2d(x, "
           "self.conv1.weight, self.conv1.bias)), [2, 2])\n"
           "    x = torch.max_pool2d(torch.relu(torch.conv2d(x, "
           "self.conv2.weight, self.conv2.bias)), [2, 2])\n"
           "    x = torch.flatten(x, 1)\n"
           "    x = torch.relu(" +
           ScriptLinear("fc1") + ")\n    return " + ScriptLinear("fc2") + "\n";
  }

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

// Adapts a torch::nn module with `at::Tensor forward(const at::Tensor&)`
// and `std::string ScriptForward()`, its forward as TorchScript source.
template <typename Impl>
class NnModel final : public Model {
 public:
  NnModel(std::shared_ptr<Impl> module, std::string description,
          ModelShape shape)
      : module_(std::move(module)),
        description_(std::move(description)),
        shape_(std::move(shape)) {}

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

  absl::Status SaveTorchScript(const std::string& path) const override {
    absl::StatusOr<torch::jit::Module> script = ScriptModuleOf(
        "Builtin", NamedParameters(), NamedBuffers(), module_->ScriptForward());
    if (!script.ok()) return script.status();
    return SaveScriptModule(*script, path);
  }

 protected:
  absl::StatusOr<ModelOutput> ForwardUnchecked(
      const std::vector<at::Tensor>& inputs,
      const at::Tensor& targets) override {
    if (inputs.size() != 1 || targets.defined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          description_, " takes one input and does not compute its loss"));
    }
    if (absl::Status s = CheckInput(inputs[0]); !s.ok()) return s;
    return ModelOutput{module_->forward(inputs[0]), at::Tensor()};
  }

 private:
  // Float [B, input_dims...] with B >= 1: torch's own errors for a wrong
  // shape are obscure (or, for the MLP's flatten, absent).
  absl::Status CheckInput(const at::Tensor& x) const {
    std::vector<int64_t> want = {x.defined() && x.dim() > 0 ? x.size(0) : 1};
    want.insert(want.end(), shape_.input_dims.begin(), shape_.input_dims.end());
    if (x.defined() && x.scalar_type() == at::kFloat && x.sizes() == want &&
        want[0] >= 1) {
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat(
        description_, ": model input must be Float [B, ",
        absl::StrJoin(shape_.input_dims, ", "), "], got ",
        x.defined() ? absl::StrCat(c10::toString(x.scalar_type()), " [",
                                   absl::StrJoin(x.sizes(), ", "), "]")
                    : "an undefined tensor"));
  }

 private:
  std::shared_ptr<Impl> module_;
  const std::string description_;
  const ModelShape shape_;
};

// Seeds torch and constructs, with torch's exceptions (allocation) caught.
template <typename Impl, typename... Args>
absl::StatusOr<std::unique_ptr<Model>> Build(uint64_t seed,
                                             std::string description,
                                             const ModelShape& shape,
                                             Args&&... args) {
  absl::MutexLock lock(&g_init_mu);
  try {
    torch::manual_seed(seed);
    auto module = std::make_shared<Impl>(std::forward<Args>(args)...);
    return std::unique_ptr<Model>(std::make_unique<NnModel<Impl>>(
        std::move(module), std::move(description), shape));
  } catch (const std::exception& e) {
    return TorchErrorToStatus(absl::StatusCode::kResourceExhausted,
                              absl::StrCat("building ", description), e);
  }
}

absl::Status CheckShape(const char* what, const ModelShape& shape) {
  if (shape.num_classes < 1 || shape.num_classes > kMaxBuiltinParameters) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the number of classes must be in [1, ",
                     kMaxBuiltinParameters, "], got ", shape.num_classes));
  }
  if (shape.input_dims.empty() || shape.input_dims.size() > 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": an input sample must have 1 to 8 dimensions, got ",
        shape.input_dims.size()));
  }
  for (int64_t d : shape.input_dims) {
    if (d < 1 || d > kMaxBuiltinParameters) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": input dimensions must be in [1, ", kMaxBuiltinParameters,
          "], got [", absl::StrJoin(shape.input_dims, ", "), "]"));
    }
  }
  if (Numel(shape.input_dims) > kMaxBuiltinParameters) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": input samples of more than ",
                     kMaxBuiltinParameters, " values"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Model>> MakeMlp(
    const std::vector<int64_t>& hidden_sizes, uint64_t seed,
    const ModelShape& shape) {
  if (absl::Status s = CheckShape("MLP", shape); !s.ok()) return s;
  if (hidden_sizes.size() > kMaxHiddenLayers) {
    return absl::InvalidArgumentError(
        absl::StrCat("MLP: at most ", kMaxHiddenLayers, " hidden layers, got ",
                     hidden_sizes.size()));
  }
  const int64_t input_numel = Numel(shape.input_dims);
  int64_t params = 0;
  int64_t in = input_numel;
  for (size_t i = 0; i <= hidden_sizes.size(); ++i) {
    const int64_t out =
        i < hidden_sizes.size() ? hidden_sizes[i] : shape.num_classes;
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
      absl::StrCat("mlp ", input_numel, "-",
                   hidden_sizes.empty()
                       ? ""
                       : absl::StrCat(absl::StrJoin(hidden_sizes, "-"), "-"),
                   shape.num_classes);
  return Build<MlpImpl>(seed, description, shape, hidden_sizes, shape);
}

absl::StatusOr<std::unique_ptr<Model>> MakeCnn(uint64_t seed,
                                               const ModelShape& shape) {
  if (absl::Status s = CheckShape("CNN", shape); !s.ok()) return s;
  const std::vector<int64_t>& d = shape.input_dims;
  if (d.size() != 3 || d[1] < 16 || d[2] < 16 || d[0] > 4096) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CNN: input samples must be images [C, H, W] with C <= 4096 and H, W "
        ">= 16, got [",
        absl::StrJoin(d, ", "), "]"));
  }
  return Build<CnnImpl>(
      seed,
      absl::StrCat("cnn ", absl::StrJoin(d, "x"),
                   " conv16-pool-conv32-pool-fc128-fc", shape.num_classes),
      shape, shape);
}

}  // namespace ringleader
