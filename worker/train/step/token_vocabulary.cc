#include "worker/train/step/token_vocabulary.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/zeros.h>

#include <vector>

#include "worker/data/batch_loader.h"
#include "worker/data/token_dataset.h"
#include "worker/train/step/batch_forward.h"

namespace ringleader {

int64_t ModelVocabulary(Model& model, const Task& task, int64_t block_size,
                        const c10::Device& device) {
  if (block_size < 1) return 0;
  Batch batch;
  batch.inputs.push_back(at::zeros({2, block_size}, at::kLong));
  batch.targets = at::zeros({2, block_size}, at::kLong);
  batch.sample_ids = {0, 1};
  at::Tensor targets;
  model.Train(false);
  absl::StatusOr<ModelOutput> out;
  {
    at::NoGradGuard no_grad;
    out = ForwardBatch(model, task, batch, device, &targets);
  }
  model.Train(true);
  if (!out.ok() || !out->output.defined() || out->output.dim() < 3) return 0;
  return out->output.size(-1);
}

int64_t LimitTokenVocabulary(const v1::JobSpec& spec, Model& model,
                             const Task& task, Dataset& train, Dataset& test,
                             const c10::Device& device) {
  if (spec.dataset().format() != v1::DATASET_FORMAT_TOKENS) return 0;
  const int64_t vocab =
      spec.task().num_classes() > 0
          ? spec.task().num_classes()
          : ModelVocabulary(model, task, spec.dataset().block_size(), device);
  if (vocab <= 0) return 0;
  for (Dataset* split : {&train, &test}) {
    if (auto* tokens = dynamic_cast<TokenDataset*>(split)) {
      tokens->LimitVocabulary(vocab);
    }
  }
  return vocab;
}

}  // namespace ringleader
