#include "worker/model/torchscript_model.h"

#include <sys/stat.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/serialization/import.h>

#include <cerrno>
#include <exception>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "worker/model/model.h"
#include "worker/model/script_module.h"
#include "worker/model/torch_status.h"

namespace ringleader {
namespace {

class TorchScriptModel final : public Model {
 public:
  TorchScriptModel(torch::jit::Module module, std::string path)
      : module_(std::move(module)), description_("torchscript " + path) {}

  // A parameter shared by two modules (tied embedding and output weights)
  // counts once, under its first name, as torch.nn.Module's does: the
  // reducer and the optimizer must see each tensor once.
  std::vector<NamedTensor> NamedParameters() const override {
    std::vector<NamedTensor> out;
    std::set<const void*> seen;
    for (const auto& item : module_.named_parameters(/*recurse=*/true)) {
      if (!seen.insert(item.value.unsafeGetTensorImpl()).second) continue;
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
    on_cpu_ = device.is_cpu();
    return absl::OkStatus();
  }
  std::string Describe() const override { return description_; }

  absl::Status SaveTorchScript(const std::string& path) const override {
    return SaveScriptModule(module_, path);
  }

 protected:
  absl::StatusOr<ModelOutput> ForwardUnchecked(
      const std::vector<at::Tensor>& inputs,
      const at::Tensor& targets) override {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined()) {
        return absl::InvalidArgumentError(
            absl::StrCat(description_, ": input ", i, " is undefined"));
      }
    }
    std::vector<c10::IValue> args(inputs.begin(), inputs.end());
    if (targets.defined()) args.emplace_back(targets);
    // On the CPU the module runs op by op, with eager autograd, as the same
    // nn.Module does in Python. LibTorch 1.13 fuses nothing on the CPU, so
    // what the graph executor's optimizations add there is its own autodiff
    // (DifferentiableGraph), once a first call with gradients has profiled
    // the graph: dropout(p=0) then draws a Bernoulli mask instead of
    // returning its input, and examples/gpt's step took 16-20% longer
    // (torch.jit.load in Python, bench/README.md). The trainer's first call
    // is the model probe's, without gradients, which happened to keep the
    // executor from building those graphs; this does not depend on it.
    // Same ops, same results up to floating-point rounding; on a GPU the
    // executor keeps its fusers. The setting is the calling thread's and is
    // restored after.
    std::optional<torch::jit::GraphOptimizerEnabledGuard> eager;
    if (on_cpu_) eager.emplace(false);
    return ParseOutput(module_.forward(std::move(args)), targets.defined());
  }

 private:
  // What forward returned, as the task needs it: a Tensor (the output, or
  // the loss when the model computes it), a tuple (output, loss) as nanoGPT
  // returns, or a dict with "loss" / "logits" as Hugging Face models do.
  absl::StatusOr<ModelOutput> ParseOutput(const c10::IValue& out,
                                          bool with_loss) const {
    if (out.isTensor()) {
      if (with_loss) return ModelOutput{at::Tensor(), out.toTensor()};
      return ModelOutput{out.toTensor(), at::Tensor()};
    }
    if (with_loss && out.isTuple()) {
      const auto& items = out.toTupleRef().elements();
      if (items.size() == 2 && items[0].isTensor() && items[1].isTensor()) {
        return ModelOutput{items[0].toTensor(), items[1].toTensor()};
      }
    }
    if (with_loss && out.isGenericDict()) {
      ModelOutput parsed;
      for (const auto& entry : out.toGenericDict()) {
        if (!entry.key().isString() || !entry.value().isTensor()) continue;
        if (entry.key().toStringRef() == "loss") {
          parsed.loss = entry.value().toTensor();
        } else if (entry.key().toStringRef() == "logits") {
          parsed.output = entry.value().toTensor();
        }
      }
      if (parsed.loss.defined()) return parsed;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        description_, ": forward returned ", out.tagKind(),
        with_loss ? "; with the loss computed by the model (LOSS_KIND_MODEL), "
                    "forward(inputs..., targets) must return the scalar loss, "
                    "(logits, loss), or a dict with \"loss\""
                  : ", not a Tensor"));
  }

 private:
  // Mutable: jit::Module's accessors are non-const though they do not change
  // the model, and it is a handle to shared state anyway.
  mutable torch::jit::Module module_;
  const std::string description_;
  bool on_cpu_ = true;  // Loaded onto the CPU.
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
  // A module saved after .eval() would otherwise train with BatchNorm's
  // running statistics and no dropout.
  model->Train(true);
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace ringleader
