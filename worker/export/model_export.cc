#include "worker/export/model_export.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/export/safetensors_writer.h"

namespace ringleader {

absl::Status ExportModel(const Model& model, const v1::ExportSpec& spec) {
  if (!spec.torchscript_path().empty()) {
    if (absl::Status s = model.SaveTorchScript(spec.torchscript_path());
        !s.ok()) {
      return s;
    }
  }
  if (!spec.safetensors_path().empty()) {
    std::vector<NamedTensor> state = model.NamedParameters();
    for (NamedTensor& b : model.NamedBuffers()) state.push_back(std::move(b));
    if (absl::Status s = WriteSafetensors(state, spec.safetensors_path(),
                                          {{"format", "pt"}});
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace ringleader
