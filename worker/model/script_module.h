#ifndef RINGLEADER_WORKER_MODEL_SCRIPT_MODULE_H_
#define RINGLEADER_WORKER_MODEL_SCRIPT_MODULE_H_

// TorchScript modules made and saved from C++: how a trained model leaves
// the system in the form a Python user loads with torch.jit.load.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/model/model.h"

namespace torch::jit {
struct Module;
}  // namespace torch::jit

namespace ringleader {

// A TorchScript module holding copies of `parameters` and `buffers` under
// their dotted names (a submodule per name component, so its state_dict keys
// are those names) and `forward_source` ("def forward(self, x): ...", which
// may use torch.* ops and self.<name> attributes) as its forward. Its class
// is named `name`. InvalidArgument when the source does not compile.
absl::StatusOr<torch::jit::Module> ScriptModuleOf(
    const std::string& name, const std::vector<NamedTensor>& parameters,
    const std::vector<NamedTensor>& buffers, const std::string& forward_source);

// Saves `module` (a copy, on the CPU and in eval mode: the caller's stays
// as it is) to `path` atomically (common/atomic_file.h): a reader never sees
// a half-written file.
absl::Status SaveScriptModule(const torch::jit::Module& module,
                              const std::string& path);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_MODEL_SCRIPT_MODULE_H_
