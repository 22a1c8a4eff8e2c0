#include "worker/model/torchscript_model.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/zeros.h>
#include <sys/stat.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/serialization/import.h>

#include <cerrno>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "worker/model/model.h"
#include "worker/model/torch_status.h"

namespace ringleader {
namespace {

class TorchScriptModel final : public Model {
 public:
  TorchScriptModel(torch::jit::Module module, std::string path)
      : module_(std::move(module)), description_("torchscript " + path) {}

  std::vector<NamedTensor> NamedParameters() const override {
    std::vector<NamedTensor> out;
    for (const auto& item : module_.named_parameters(/*recurse=*/true)) {
      out.push_back({item.name, item.value});
    }
    return out;
  }
  std::vector<NamedTensor> NamedBuffers() const override {
    std::vector<NamedTensor> out;
    for (const auto& item : module_.named_buffers(/*recurse=*/true)) {
      out.push_back({item.name, item.value});
    }
    return out;
  }
  void Train(bool on) override { module_.train(on); }
  bool is_training() const override { return module_.is_training(); }
  absl::Status To(const c10::Device& device) override {
    try {
      module_.to(device);
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
    c10::IValue out = module_.forward({images});
    if (!out.isTensor()) {
      return absl::InvalidArgumentError(
          absl::StrCat(description_, ": forward returned ", out.tagKind(),
                       ", not a Tensor"));
    }
    return out.toTensor();
  }

 private:
  // Mutable: jit::Module's accessors are non-const though they do not change
  // the model, and it is a handle to shared state anyway.
  mutable torch::jit::Module module_;
  const std::string description_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Model>> LoadTorchScriptModel(
    const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::ErrnoToStatus(errno,
                               absl::StrCat(path, ": TorchScript model"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": TorchScript model path is not a file"));
  }
  torch::jit::Module module;
  try {
    module = torch::jit::load(path, c10::Device(c10::kCPU));
  } catch (const std::exception& e) {
    return TorchErrorToStatus(
        absl::StatusCode::kInvalidArgument,
        absl::StrCat(path,
                     ": not a TorchScript module (save one with "
                     "torch.jit.save)"),
        e);
  }
  if (!module.find_method("forward").has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the TorchScript module has no forward method"));
  }
  auto model = std::make_unique<TorchScriptModel>(std::move(module), path);
  if (model->Parameters().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": the TorchScript module has no parameters to train"));
  }
  // Probe the contract once here, so a wrong model fails at job start with
  // a clear reason rather than at the first training step.
  model->Train(false);
  {
    at::NoGradGuard no_grad;
    absl::StatusOr<at::Tensor> out = model->Forward(
        at::zeros({2, kImageChannels, kImageSize, kImageSize}, at::kFloat));
    if (!out.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path,
          ": the module must map Float [B, 1, 28, 28] images to Float [B, ",
          kNumClasses, "] logits: ", out.status().message()));
    }
  }
  model->Train(true);
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace ringleader
