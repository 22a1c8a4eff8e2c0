#include "worker/train/step/task.h"

#include <ATen/core/Tensor.h>
#include <torch/nn/functional/loss.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ringleader {
namespace {

namespace F = torch::nn::functional;

constexpr int64_t kTorchIgnoreIndex = -100;  // nn.CrossEntropyLoss's.

std::string Shape(const at::Tensor& t) {
  return absl::StrCat(c10::toString(t.scalar_type()), " [",
                      absl::StrJoin(t.sizes(), ", "), "]");
}

v1::LossKind LossOf(const v1::TaskSpec& spec) {
  if (spec.loss() != v1::LOSS_KIND_UNSPECIFIED) return spec.loss();
  return spec.kind() == v1::TASK_KIND_REGRESSION ? v1::LOSS_KIND_MSE
                                                 : v1::LOSS_KIND_CROSS_ENTROPY;
}

// Flattened to [N, C] and [N]: per-position labels count like samples.
at::Tensor Logits2d(const at::Tensor& output) {
  return output.reshape({-1, output.size(-1)});
}

}  // namespace

Task::Task(const v1::TaskSpec& spec)
    : kind_(spec.kind() == v1::TASK_KIND_UNSPECIFIED
                ? v1::TASK_KIND_CLASSIFICATION
                : spec.kind()),
      loss_(LossOf(spec)),
      ignore_index_(spec.has_ignore_index() ? spec.ignore_index()
                                            : kTorchIgnoreIndex),
      label_smoothing_(spec.label_smoothing()),
      top_k_(spec.top_k() > 0 ? spec.top_k() : 5) {}

absl::Status Task::CheckClasses(const at::Tensor& output,
                                const at::Tensor& targets,
                                const std::vector<int64_t>& sample_ids,
                                const at::Tensor& host_targets) const {
  if (output.dim() != targets.dim() + 1 || output.dim() < 2 ||
      output.sizes().slice(0, targets.dim()) != targets.sizes() ||
      !at::isFloatingType(output.scalar_type()) ||
      targets.scalar_type() != at::kLong) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the model's output ", Shape(output), " does not fit the targets ",
        Shape(targets),
        ": class scores must be float [B, C] for int64 targets [B], or "
        "[B, T, C] for [B, T]"));
  }
  const int64_t classes = output.size(-1);
  const at::Tensor flat =
      (host_targets.defined() ? host_targets : targets).reshape({-1});
  const at::Tensor bad =
      flat.ne(ignore_index_)
          .logical_and(flat.lt(0).logical_or(flat.ge(classes)));
  if (!bad.any().item<bool>()) return absl::OkStatus();
  const int64_t pos = bad.nonzero().min().item<int64_t>();
  const int64_t per_sample = targets.numel() / targets.size(0);
  const size_t row = static_cast<size_t>(pos / per_sample);
  return absl::InvalidArgumentError(absl::StrCat(
      "target ", flat[pos].item<int64_t>(), " of sample ",
      row < sample_ids.size() ? sample_ids[row] : static_cast<int64_t>(row),
      per_sample > 1 ? absl::StrCat(" (position ", pos % per_sample, ")") : "",
      " is outside [0, ", classes, "): the model's output has ", classes,
      " classes"));
}

absl::Status Task::CheckRegression(const at::Tensor& output,
                                   const at::Tensor& targets) const {
  if (output.numel() != targets.numel() || output.size(0) != targets.size(0) ||
      !at::isFloatingType(output.scalar_type()) ||
      !at::isFloatingType(targets.scalar_type())) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model's output ", Shape(output),
                     " does not fit the targets ", Shape(targets),
                     ": regression needs float outputs of the targets' "
                     "shape"));
  }
  return absl::OkStatus();
}

absl::StatusOr<at::Tensor> Task::Loss(const ModelOutput& out,
                                      const at::Tensor& targets,
                                      const std::vector<int64_t>& sample_ids,
                                      const at::Tensor& host_targets) const {
  if (model_computes_loss()) {
    if (!out.loss.defined()) {
      return absl::InvalidArgumentError(
          "the model returned no loss (LOSS_KIND_MODEL)");
    }
    return out.loss.reshape({});
  }
  if (!out.output.defined()) {
    return absl::InvalidArgumentError("the model returned no output");
  }
  if (classes()) {
    if (absl::Status s =
            CheckClasses(out.output, targets, sample_ids, host_targets);
        !s.ok()) {
      return s;
    }
    return F::cross_entropy(Logits2d(out.output), targets.reshape({-1}),
                            F::CrossEntropyFuncOptions()
                                .ignore_index(ignore_index_)
                                .label_smoothing(label_smoothing_));
  }
  if (absl::Status s = CheckRegression(out.output, targets); !s.ok()) return s;
  const at::Tensor prediction = out.output.reshape(targets.sizes());
  if (loss_ == v1::LOSS_KIND_L1) return F::l1_loss(prediction, targets);
  return F::mse_loss(prediction, targets);
}

void Task::AccumulateClasses(const at::Tensor& output,
                             const at::Tensor& targets,
                             MetricSums& sums) const {
  const at::Tensor logits = Logits2d(output).to(at::kFloat);
  const at::Tensor labels = targets.reshape({-1});
  const at::Tensor valid = labels.ne(ignore_index_);
  const int64_t n = valid.sum().item<int64_t>();
  const double loss_sum = F::cross_entropy(logits, labels,
                                           F::CrossEntropyFuncOptions()
                                               .ignore_index(ignore_index_)
                                               .reduction(torch::kSum))
                              .item<double>();
  sums.Add("loss", loss_sum, n);
  const at::Tensor hit = logits.argmax(1).eq(labels).logical_and(valid);
  sums.Add("accuracy", hit.sum().item<double>(), n);
  if (kind_ == v1::TASK_KIND_CLASSIFICATION && logits.size(1) > top_k_) {
    const at::Tensor top = std::get<1>(logits.topk(top_k_, 1));
    const at::Tensor in_top =
        top.eq(labels.unsqueeze(1)).any(1).logical_and(valid);
    sums.Add(absl::StrCat("top", top_k_, "_accuracy"),
             in_top.sum().item<double>(), n);
  }
}

absl::Status Task::Accumulate(const ModelOutput& out, const at::Tensor& targets,
                              const std::vector<int64_t>& sample_ids,
                              MetricSums& sums) const {
  if (!out.output.defined() || (model_computes_loss() && !classes())) {
    // Only the model's own (mean) loss: weighted by what it averaged over.
    if (!out.loss.defined()) {
      return absl::InvalidArgumentError("the model returned no loss");
    }
    const int64_t n = kind_ == v1::TASK_KIND_LANGUAGE_MODEL ? targets.numel()
                                                            : targets.size(0);
    sums.Add("loss", out.loss.item<double>() * n, n);
    return absl::OkStatus();
  }
  if (classes()) {
    if (absl::Status s = CheckClasses(out.output, targets, sample_ids);
        !s.ok()) {
      return s;
    }
    AccumulateClasses(out.output, targets, sums);
    return absl::OkStatus();
  }
  if (absl::Status s = CheckRegression(out.output, targets); !s.ok()) return s;
  const at::Tensor diff =
      out.output.reshape(targets.sizes()).to(at::kDouble) - targets;
  sums.Add("mse", diff.square().sum().item<double>(), targets.numel());
  sums.Add("mae", diff.abs().sum().item<double>(), targets.numel());
  return absl::OkStatus();
}

}  // namespace ringleader
