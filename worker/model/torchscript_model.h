#ifndef RINGLEADER_WORKER_MODEL_TORCHSCRIPT_MODEL_H_
#define RINGLEADER_WORKER_MODEL_TORCHSCRIPT_MODEL_H_

// Any model a user saved with torch.jit.save (or torch::jit::Module::save),
// so jobs are not limited to the built-in architectures.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "worker/model/model.h"

namespace ringleader {

// Loads `path` onto the CPU and checks it can serve as a Model: a module with
// a forward method and at least one parameter that takes gradients. Whether
// it fits the data is the trainer's check, on a real batch (model_probe).
// The model is returned in training mode. NotFound when the file does not
// exist; InvalidArgument naming the file and the reason otherwise (not
// TorchScript, no forward, no parameters).
// Its parameters are whatever the file holds: the trainer broadcasts rank
// 0's anyway. Thread-safe (distinct calls share nothing); the model is not.
absl::StatusOr<std::unique_ptr<Model>> LoadTorchScriptModel(
    const std::string& path);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_MODEL_TORCHSCRIPT_MODEL_H_
