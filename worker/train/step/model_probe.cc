#include "worker/train/step/model_probe.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "worker/data/batch_loader.h"
#include "worker/train/step/batch_forward.h"

namespace ringleader {
namespace {

// "float32 [3, 32, 32] -> int64 []".
std::string FieldsString(const Dataset& data) {
  std::vector<std::string> inputs;
  for (const FieldShape& f : data.input_fields())
    inputs.push_back(f.ToString());
  return absl::StrCat(absl::StrJoin(inputs, ", "), " -> targets ",
                      data.target_field().ToString());
}

bool HasImageInput(const Batch& batch) {
  for (const at::Tensor& x : batch.inputs) {
    if (x.dim() == 4 && x.is_floating_point()) return true;
  }
  return false;
}

bool HasConvolutionKernel(const Model& model) {
  for (const at::Tensor& p : model.Parameters()) {
    if (p.dim() == 4) return true;
  }
  return false;
}

// The batch's loss with the model's current input layout, in eval mode
// without gradients, so nothing changes (BatchNorm's running statistics
// included); the model is back in training mode after.
absl::StatusOr<at::Tensor> EvalLoss(Model& model, const Task& task,
                                    const Batch& batch,
                                    const c10::Device& device) {
  model.Train(false);
  absl::StatusOr<at::Tensor> loss;
  {
    at::NoGradGuard no_grad;
    loss = BatchLoss(model, task, batch, device);
  }
  model.Train(true);
  return loss;
}

// Whether channels-last could help at all: CPU, an image input, a
// convolution kernel.
bool MayRunChannelsLast(const Model& model, const Batch& batch,
                        const c10::Device& device) {
  return device.is_cpu() && HasImageInput(batch) && HasConvolutionKernel(model);
}

// With the batch's NCHW loss known: the same batch channels-last, and the
// flag set by whether the two agree.
bool ChooseGivenNchwLoss(Model& model, const Task& task, const Batch& batch,
                         const c10::Device& device, double nchw) {
  model.SetChannelsLastInputs(true);
  const absl::StatusOr<at::Tensor> nhwc = EvalLoss(model, task, batch, device);
  const bool same = nhwc.ok() && std::isfinite(nchw) &&
                    std::abs(nhwc->item<double>() - nchw) <=
                        1e-5 * std::max(1.0, std::abs(nchw));
  model.SetChannelsLastInputs(same);
  if (same) {
    LOG(INFO) << model.Describe()
              << ": image inputs channels-last on the CPU (the same loss on "
                 "a probe batch; oneDNN's faster layout)";
  }
  return same;
}

}  // namespace

bool ChooseChannelsLastInputs(Model& model, const Task& task,
                              const Batch& batch, const c10::Device& device) {
  model.SetChannelsLastInputs(false);
  if (!MayRunChannelsLast(model, batch, device)) return false;
  const absl::StatusOr<at::Tensor> nchw = EvalLoss(model, task, batch, device);
  return nchw.ok() &&
         ChooseGivenNchwLoss(model, task, batch, device, nchw->item<double>());
}

absl::StatusOr<ModelShape> ModelShapeFor(const v1::JobSpec& spec,
                                         const Dataset& train) {
  if (spec.model().arch() == v1::MODEL_ARCH_TORCHSCRIPT) return ModelShape();
  const std::vector<FieldShape> fields = train.input_fields();
  if (fields.size() != 1 || fields[0].type != ElementType::kFloat32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the built-in models take one float input per sample; the ",
        train.Describe(), " has ", fields.size(),
        fields.size() == 1 ? absl::StrCat(" of ", fields[0].ToString())
                           : std::string(" inputs")));
  }
  ModelShape shape;
  shape.input_dims = fields[0].dims;
  shape.num_classes = spec.task().num_classes() > 0 ? spec.task().num_classes()
                                                    : train.num_classes();
  if (shape.num_classes < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the number of classes is unknown for the ",
                     train.Describe(), ": set task.num_classes"));
  }
  return shape;
}

absl::Status ProbeModel(Model& model, const Task& task, const Dataset& data,
                        const c10::Device& device) {
  const int64_t n = std::min<int64_t>(2, data.size());
  if (n == 0) return absl::OkStatus();
  std::vector<int64_t> first(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) first[static_cast<size_t>(i)] = i;
  absl::StatusOr<std::unique_ptr<BatchLoader>> loader =
      BatchLoader::Create(data, std::move(first), n);
  if (!loader.ok()) return loader.status();
  std::optional<Batch> batch = (*loader)->Next();
  if (!batch.has_value()) {
    return absl::Status((*loader)->status().code(),
                        absl::StrCat("reading the ", data.Describe(), ": ",
                                     (*loader)->status().message()));
  }
  // NCHW first: that loss is also the layout choice's reference.
  model.SetChannelsLastInputs(false);
  const absl::StatusOr<at::Tensor> loss = EvalLoss(model, task, *batch, device);
  if (!loss.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the model does not fit the ", data.Describe(), " (inputs ",
        FieldsString(data), "): ", loss.status().message()));
  }
  if (MayRunChannelsLast(model, *batch, device)) {
    ChooseGivenNchwLoss(model, task, *batch, device, loss->item<double>());
  }
  return absl::OkStatus();
}

}  // namespace ringleader
