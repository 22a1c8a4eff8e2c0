#ifndef RINGLEADER_WORKER_MODEL_MODEL_H_
#define RINGLEADER_WORKER_MODEL_MODEL_H_

// The network one rank trains, whatever it is built from (a built-in
// torch::nn module or a TorchScript file): what the trainer, the DDP reducer
// and checkpoints need from it, with torch's exceptions turned into Status.

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace torch {
namespace serialize {
class InputArchive;
class OutputArchive;
}  // namespace serialize
}  // namespace torch

namespace ringleader {

// What a built-in model is built for: one sample's input shape (one float
// input) and the number of classes it scores. TorchScript models bring their
// own. The default is the 28x28 grey ten-class shape of (Fashion-)MNIST.
struct ModelShape {
  std::vector<int64_t> input_dims = {1, 28, 28};
  int64_t num_classes = 10;
};

// What one forward pass gives the task: the model's output (logits [B, C]
// or [B, T, C], or regression values) and, when the model computes its own
// loss, that scalar. Either may be undefined, not both.
struct ModelOutput {
  at::Tensor output;
  at::Tensor loss;
};

struct NamedTensor {
  std::string name;  // Dotted path, as torch names it ("fc0.weight").
  at::Tensor tensor;
};

// `params` and `buffers` into `archive` as Model::Save lays them out (a
// checkpoint snapshot's copies are written this way, off the training
// thread). May throw c10::Error.
void WriteNamedTensors(const std::vector<NamedTensor>& params,
                       const std::vector<NamedTensor>& buffers,
                       torch::serialize::OutputArchive& archive);

// Not thread-safe: a model belongs to one training thread. at::Tensor is
// torch::Tensor.
class Model {
 public:
  virtual ~Model() = default;

  // Runs forward(inputs...), or forward(inputs..., targets) when `targets`
  // is defined (the model computes its loss: it must return the scalar
  // loss, a tuple (output, loss) as nanoGPT does, or a dict with "loss" and
  // optionally "logits" as Hugging Face models do). InvalidArgument, with
  // torch's reason on one line, when forward fails or returns anything
  // else.
  absl::StatusOr<ModelOutput> Forward(const std::vector<at::Tensor>& inputs,
                                      const at::Tensor& targets = {});
  // With `on`, Forward runs under bf16 autocast (worker/model/autocast.h)
  // and hands the task its floating outputs as float32, so that the loss
  // and the metrics are computed in float32. Off by default.
  void SetBf16Autocast(bool on) { bf16_autocast_ = on; }
  bool bf16_autocast() const { return bf16_autocast_; }
  // With `on`, Forward hands the model its 4-D floating CPU inputs (image
  // batches) channels-last (worker/model/channels_last.h): the same values
  // in the layout oneDNN's convolutions run fastest, which each layer then
  // keeps. Off by default; the model probe turns it on where the model
  // computes the same with it (model_probe.h).
  void SetChannelsLastInputs(bool on) { channels_last_inputs_ = on; }
  bool channels_last_inputs() const { return channels_last_inputs_; }

  // The one-input form for models that return their output: forward(x).
  absl::StatusOr<at::Tensor> Forward(const at::Tensor& x);

  // All parameters, in registration order: the order DDP buckets and
  // broadcasts them in, identical on every rank.
  virtual std::vector<NamedTensor> NamedParameters() const = 0;
  // State that is not trained but saved (BatchNorm running statistics).
  virtual std::vector<NamedTensor> NamedBuffers() const = 0;

  // The parameters that take gradients (requires_grad), in the same order:
  // what the reducer and the optimizer get.
  std::vector<at::Tensor> Parameters() const;
  // Elements over all of NamedParameters().
  int64_t NumParameters() const;

  // Training mode (dropout, BatchNorm) on or off; models start in training.
  virtual void Train(bool on) = 0;
  virtual bool is_training() const = 0;

  // Moves parameters and buffers; tensors from Parameters() stay valid (they
  // are updated in place, as torch's Module::to does).
  virtual absl::Status To(const c10::Device& device) = 0;

  // One line for logs: "mlp 784-256-128-10".
  virtual std::string Describe() const = 0;

  // The model with its current weights as a TorchScript file that
  // torch.jit.load in Python runs (atomically: common/atomic_file.h).
  virtual absl::Status SaveTorchScript(const std::string& path) const = 0;

  // Parameters and buffers into `archive`, nested by their dotted names the
  // way torch::nn::Module::save lays them out (so torch::load can read a
  // built-in model's entries too).
  absl::Status Save(torch::serialize::OutputArchive& archive) const;
  // The reverse, all or nothing: InvalidArgument, leaving the model as it
  // was, when an entry is missing, has another shape or dtype, or the
  // archive holds tensors this model does not have.
  absl::Status Load(torch::serialize::InputArchive& archive);

 protected:
  // The module's own forward (see Forward); may throw (Forward catches).
  virtual absl::StatusOr<ModelOutput> ForwardUnchecked(
      const std::vector<at::Tensor>& inputs, const at::Tensor& targets) = 0;

 private:
  absl::StatusOr<ModelOutput> ForwardMaybeAutocast(
      const std::vector<at::Tensor>& inputs, const at::Tensor& targets);

  bool bf16_autocast_ = false;
  bool channels_last_inputs_ = false;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_MODEL_MODEL_H_
