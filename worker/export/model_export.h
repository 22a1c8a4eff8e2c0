#ifndef RINGLEADER_WORKER_EXPORT_MODEL_EXPORT_H_
#define RINGLEADER_WORKER_EXPORT_MODEL_EXPORT_H_

// A trained model leaving the system in the forms PyTorch users load: the
// module as TorchScript (torch.jit.load runs it) and its state_dict as
// safetensors (safetensors.torch.load_file, then model.load_state_dict).

#include "absl/status/status.h"
#include "ringleader/v1/job.pb.h"
#include "worker/model/model.h"

namespace ringleader {

// Writes each file `spec` names (none: nothing to do). The TorchScript file
// is saved in eval mode, for inference. The safetensors keys are the
// state_dict's: parameters then buffers by their dotted names (a parameter
// tied to another appears once, under its first name).
absl::Status ExportModel(const Model& model, const v1::ExportSpec& spec);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_EXPORT_MODEL_EXPORT_H_
