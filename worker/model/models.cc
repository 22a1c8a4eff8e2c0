#include "worker/model/models.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ringleader/v1/job.pb.h"
#include "worker/model/builtin_models.h"
#include "worker/model/model.h"
#include "worker/model/torchscript_model.h"

namespace ringleader {

absl::StatusOr<std::shared_ptr<Model>> BuildModel(const v1::ModelSpec& spec,
                                                  uint64_t seed,
                                                  const ModelShape& shape) {
  const bool mlp = spec.arch() == v1::MODEL_ARCH_MLP;
  const bool script = spec.arch() == v1::MODEL_ARCH_TORCHSCRIPT;
  if (!mlp && spec.hidden_sizes_size() > 0) {
    return absl::InvalidArgumentError(
        "model.hidden_sizes is only valid with MODEL_ARCH_MLP");
  }
  if (!script && !spec.torchscript_path().empty()) {
    return absl::InvalidArgumentError(
        "model.torchscript_path is only valid with MODEL_ARCH_TORCHSCRIPT");
  }
  absl::StatusOr<std::unique_ptr<Model>> model;
  switch (spec.arch()) {
    case v1::MODEL_ARCH_MLP: {
      std::vector<int64_t> hidden(spec.hidden_sizes().begin(),
                                  spec.hidden_sizes().end());
      if (hidden.empty()) hidden = {256, 128};
      model = MakeMlp(hidden, seed, shape);
      break;
    }
    case v1::MODEL_ARCH_CNN:
      model = MakeCnn(seed, shape);
      break;
    case v1::MODEL_ARCH_TORCHSCRIPT:
      if (spec.torchscript_path().empty()) {
        return absl::InvalidArgumentError(
            "model.torchscript_path is required with MODEL_ARCH_TORCHSCRIPT");
      }
      model = LoadTorchScriptModel(spec.torchscript_path());
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("model.arch ", static_cast<int>(spec.arch()),
                       " is not a supported architecture"));
  }
  if (!model.ok()) return model.status();
  return std::shared_ptr<Model>(*std::move(model));
}

}  // namespace ringleader
