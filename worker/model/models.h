#ifndef RINGLEADER_WORKER_MODEL_MODELS_H_
#define RINGLEADER_WORKER_MODEL_MODELS_H_

// The model a job's ModelSpec describes.

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "ringleader/v1/job.pb.h"
#include "worker/model/model.h"

namespace ringleader {

// MODEL_ARCH_MLP: MakeMlp(hidden_sizes, or (256, 128) when empty);
// MODEL_ARCH_CNN: MakeCnn, both for `shape` (the data's);
// MODEL_ARCH_TORCHSCRIPT: LoadTorchScriptModel (its weights and shapes come
// from the file, `seed` and `shape` are unused). Built-ins are
// initialized from `seed` (the job's), identically on every rank. CPU;
// move with Model::To. InvalidArgument for an unspecified or unknown arch
// or fields that do not fit it (see common/job_spec_validator.h, which
// rejects these earlier). Thread-safe.
absl::StatusOr<std::shared_ptr<Model>> BuildModel(const v1::ModelSpec& spec,
                                                  uint64_t seed,
                                                  const ModelShape& shape = {});

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_MODEL_MODELS_H_
