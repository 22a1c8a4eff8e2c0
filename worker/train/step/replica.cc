#include "worker/train/step/replica.h"

#include <torch/torch.h>

#include <utility>

#include "worker/model/models.h"
#include "worker/model/optimizer.h"
#include "worker/train/job_error.h"
#include "worker/train/step/model_probe.h"
#include "worker/train/step/precision.h"
#include "worker/train/step/token_vocabulary.h"

namespace ringleader {

absl::StatusOr<Replica> BuildReplica(const v1::JobSpec& spec,
                                     const JobData& data,
                                     const c10::Device& device) {
  Replica r;
  r.task = std::make_unique<Task>(spec.task());
  absl::StatusOr<ModelShape> shape = ModelShapeFor(spec, *data.train);
  if (!shape.ok()) return JobError(shape.status());
  // The same seed on every rank; rank 0's weights are broadcast anyway.
  torch::manual_seed(spec.seed());
  absl::StatusOr<std::shared_ptr<Model>> model =
      BuildModel(spec.model(), spec.seed(), *shape);
  if (!model.ok()) return JobError(model.status(), "building the model");
  r.model = *std::move(model);
  if (absl::Status s = r.model->To(device); !s.ok()) return s;
  if (absl::Status s = ApplyPrecision(spec, device, *r.model); !s.ok()) {
    return JobError(s);
  }
  // Before the probe reads the first windows: an id past the vocabulary
  // fails naming its position, not in the embedding's traceback.
  LimitTokenVocabulary(spec, *r.model, *r.task, *data.train, *data.test,
                       device);
  if (absl::Status s = ProbeModel(*r.model, *r.task, *data.train, device);
      !s.ok()) {
    return JobError(s);
  }
  absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> optimizer =
      BuildOptimizer(spec.optimizer(), r.model->Parameters());
  if (!optimizer.ok()) return JobError(optimizer.status());
  r.optimizer = *std::move(optimizer);
  return r;
}

}  // namespace ringleader
