#include "worker/train/checkpoint/checkpoint.h"

#include <torch/torch.h>

#include <functional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "worker/train/checkpoint/checkpoint_file.h"
#include "worker/train/checkpoint/checkpoint_snapshot.h"

namespace ringleader {

namespace {

// The archive both paths write: "model", "optimizer", "epoch", "step".
absl::StatusOr<std::string> SerializeArchive(
    const std::function<absl::Status(torch::serialize::OutputArchive&)>& model,
    const std::function<void(torch::serialize::OutputArchive&)>& optimizer,
    const CheckpointPosition& pos) {
  try {
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive model_archive;
    if (absl::Status s = model(model_archive); !s.ok()) return s;
    archive.write("model", model_archive);
    torch::serialize::OutputArchive optim_archive;
    optimizer(optim_archive);
    archive.write("optimizer", optim_archive);
    archive.write("epoch", torch::tensor(pos.epoch));
    archive.write("step", torch::tensor(pos.step));
    std::ostringstream out;
    archive.save_to(out);
    return std::move(out).str();
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("cannot serialize checkpoint: ",
                                            e.what_without_backtrace()));
  }
}

absl::Status WriteArchive(const std::string& path,
                          const absl::StatusOr<std::string>& payload) {
  if (!payload.ok()) return payload.status();
  return WriteCheckpointFile(path, *payload);
}

}  // namespace

absl::StatusOr<std::string> SerializeCheckpoint(
    const Model& model, torch::optim::Optimizer& optimizer,
    const CheckpointPosition& pos) {
  return SerializeArchive(
      [&](torch::serialize::OutputArchive& a) { return model.Save(a); },
      [&](torch::serialize::OutputArchive& a) { optimizer.save(a); }, pos);
}

absl::Status SaveCheckpoint(const std::string& path, const Model& model,
                            torch::optim::Optimizer& optimizer,
                            const CheckpointPosition& pos) {
  return WriteArchive(path, SerializeCheckpoint(model, optimizer, pos));
}

absl::Status SaveCheckpoint(const std::string& path,
                            const CheckpointSnapshot& snapshot) {
  return WriteArchive(path, SerializeArchive(
                                [&](torch::serialize::OutputArchive& a) {
                                  snapshot.SaveModel(a);
                                  return absl::OkStatus();
                                },
                                [&](torch::serialize::OutputArchive& a) {
                                  snapshot.SaveOptimizer(a);
                                },
                                snapshot.position()));
}

absl::StatusOr<CheckpointPosition> LoadCheckpoint(
    const std::string& path, Model& model, torch::optim::Optimizer* optimizer) {
  absl::StatusOr<std::string> payload = ReadCheckpointFile(path);
  if (!payload.ok()) return payload.status();
  return LoadCheckpointPayload(*payload, absl::StrCat("checkpoint ", path),
                               model, optimizer);
}

absl::StatusOr<CheckpointPosition> LoadCheckpointPayload(
    absl::string_view payload, absl::string_view what, Model& model,
    torch::optim::Optimizer* optimizer) {
  try {
    // Tensors are mapped onto the model's device, so a checkpoint written on
    // one device (cuda:0, or the CPU) resumes on any other.
    const std::vector<at::Tensor> params = model.Parameters();
    c10::optional<torch::Device> device;
    if (!params.empty()) device = params.front().device();
    torch::serialize::InputArchive archive;
    archive.load_from(payload.data(), payload.size(), device);
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    if (absl::Status s = model.Load(model_archive); !s.ok()) return s;
    if (optimizer != nullptr) {
      torch::serialize::InputArchive optim_archive;
      archive.read("optimizer", optim_archive);
      optimizer->load(optim_archive);
    }
    torch::Tensor epoch, step;
    archive.read("epoch", epoch);
    archive.read("step", step);
    return CheckpointPosition{epoch.item<int64_t>(), step.item<int64_t>()};
  } catch (const c10::Error& e) {
    return absl::DataLossError(absl::StrCat(
        what, " does not fit this job: ", e.what_without_backtrace()));
  }
}

}  // namespace ringleader
