#include "worker/model/model.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cstdint>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "worker/model/autocast.h"
#include "worker/model/channels_last.h"
#include "worker/model/torch_status.h"

namespace ringleader {
namespace {

std::string TensorString(const at::Tensor& t) {
  return absl::StrCat(c10::toString(t.scalar_type()), " [",
                      absl::StrJoin(t.sizes(), ", "), "]");
}

// Parameters and buffers arranged by the components of their dotted names:
// torch archives nest one sub-archive per submodule and do not accept dots in
// a key.
struct Node {
  struct Leaf {
    at::Tensor tensor;
    bool is_buffer;
  };
  std::map<std::string, Leaf> leaves;
  std::map<std::string, Node> children;
};

Node BuildTree(const std::vector<NamedTensor>& params,
               const std::vector<NamedTensor>& buffers) {
  Node root;
  for (const auto* list : {&params, &buffers}) {
    for (const NamedTensor& nt : *list) {
      std::vector<std::string> parts = absl::StrSplit(nt.name, '.');
      Node* node = &root;
      for (size_t i = 0; i + 1 < parts.size(); ++i) {
        node = &node->children[parts[i]];
      }
      node->leaves[parts.back()] = {nt.tensor, list == &buffers};
    }
  }
  return root;
}

void WriteTree(const Node& node, torch::serialize::OutputArchive& archive) {
  for (const auto& [key, leaf] : node.leaves) {
    archive.write(key, leaf.tensor, leaf.is_buffer);
  }
  for (const auto& [key, child] : node.children) {
    torch::serialize::OutputArchive sub(archive.compilation_unit());
    WriteTree(child, sub);
    archive.write(key, sub);
  }
}

struct PendingCopy {
  at::Tensor destination;
  at::Tensor source;
};

// Reads and checks every entry `node` expects, without touching the model.
absl::Status ReadTree(const Node& node, torch::serialize::InputArchive& archive,
                      const std::string& prefix,
                      std::vector<PendingCopy>& copies) {
  for (const auto& [key, leaf] : node.leaves) {
    const std::string name = prefix + key;
    at::Tensor source;
    if (!archive.try_read(key, source, leaf.is_buffer)) {
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoint has no ",
                       leaf.is_buffer ? "buffer " : "parameter ", name));
    }
    if (source.sizes() != leaf.tensor.sizes() ||
        source.scalar_type() != leaf.tensor.scalar_type()) {
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoint entry ", name, " is ", TensorString(source),
                       ", the model's is ", TensorString(leaf.tensor)));
    }
    copies.push_back({leaf.tensor, source});
  }
  for (const auto& [key, child] : node.children) {
    torch::serialize::InputArchive sub;
    if (!archive.try_read(key, sub)) {
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoint has no entries for module ", prefix, key));
    }
    if (absl::Status s = ReadTree(child, sub, prefix + key + ".", copies);
        !s.ok()) {
      return s;
    }
  }
  // Tensors or modules the model lacks mean the checkpoint is of another
  // architecture. Other attributes (an archive's "training" flag) are fine.
  for (const std::string& key : archive.keys()) {
    if (node.leaves.count(key) != 0 || node.children.count(key) != 0) continue;
    c10::IValue value;
    if (archive.try_read(key, value) &&
        (value.isTensor() || value.isObject())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "checkpoint has entry ", prefix, key, ", which the model lacks"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ModelOutput> Model::ForwardMaybeAutocast(
    const std::vector<at::Tensor>& inputs, const at::Tensor& targets) {
  if (!bf16_autocast_) return ForwardUnchecked(inputs, targets);
  absl::StatusOr<ModelOutput> out;
  {
    AutocastScope autocast(
        inputs.empty() ? c10::DeviceType::CPU : inputs.front().device().type(),
        /*enabled=*/true);
    out = ForwardUnchecked(inputs, targets);
  }
  // torch.autocast leaves the model's bf16 output to the script, whose loss
  // then runs in float32 by autocast's rules; here the task's loss and
  // metrics run outside the scope, so they get float32 inputs.
  if (out.ok()) {
    for (at::Tensor* t : {&out->output, &out->loss}) {
      if (t->defined() && t->is_floating_point()) *t = t->to(at::kFloat);
    }
  }
  return out;
}

absl::StatusOr<ModelOutput> Model::Forward(
    const std::vector<at::Tensor>& inputs, const at::Tensor& targets) {
  try {
    absl::StatusOr<ModelOutput> out;
    if (channels_last_inputs_) {
      std::vector<at::Tensor> nhwc;
      nhwc.reserve(inputs.size());
      for (const at::Tensor& x : inputs) nhwc.push_back(ChannelsLastOnCpu(x));
      out = ForwardMaybeAutocast(nhwc, targets);
    } else {
      out = ForwardMaybeAutocast(inputs, targets);
    }
    if (!out.ok()) return out.status();
    if (!out->output.defined() && !out->loss.defined()) {
      return absl::InvalidArgumentError(
          absl::StrCat(Describe(), ": forward returned no tensor"));
    }
    if (out->loss.defined() && out->loss.numel() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(Describe(), ": the loss forward returned is ",
                       TensorString(out->loss), ", not a scalar"));
    }
    return out;
  } catch (const std::exception& e) {
    return TorchErrorToStatus(absl::StatusCode::kInvalidArgument,
                              absl::StrCat(Describe(), " forward failed"), e);
  }
}

absl::StatusOr<at::Tensor> Model::Forward(const at::Tensor& x) {
  absl::StatusOr<ModelOutput> out = Forward(std::vector<at::Tensor>{x});
  if (!out.ok()) return out.status();
  if (!out->output.defined()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Describe(), ": forward returned only a loss"));
  }
  return out->output;
}

std::vector<at::Tensor> Model::Parameters() const {
  std::vector<at::Tensor> out;
  for (NamedTensor& nt : NamedParameters()) {
    if (nt.tensor.requires_grad()) out.push_back(std::move(nt.tensor));
  }
  return out;
}

int64_t Model::NumParameters() const {
  int64_t n = 0;
  for (const NamedTensor& nt : NamedParameters()) n += nt.tensor.numel();
  return n;
}

void WriteNamedTensors(const std::vector<NamedTensor>& params,
                       const std::vector<NamedTensor>& buffers,
                       torch::serialize::OutputArchive& archive) {
  WriteTree(BuildTree(params, buffers), archive);
}

absl::Status Model::Save(torch::serialize::OutputArchive& archive) const {
  try {
    WriteNamedTensors(NamedParameters(), NamedBuffers(), archive);
  } catch (const std::exception& e) {
    return TorchErrorToStatus(absl::StatusCode::kInternal,
                              absl::StrCat("saving ", Describe()), e);
  }
  return absl::OkStatus();
}

absl::Status Model::Load(torch::serialize::InputArchive& archive) {
  try {
    const Node tree = BuildTree(NamedParameters(), NamedBuffers());
    std::vector<PendingCopy> copies;
    if (absl::Status s = ReadTree(tree, archive, "", copies); !s.ok()) {
      return absl::Status(
          s.code(), absl::StrCat("loading ", Describe(), ": ", s.message()));
    }
    // Copies, not re-pointing: the optimizer and the reducer hold these
    // tensors and must see the loaded values.
    at::NoGradGuard no_grad;
    for (PendingCopy& c : copies) c.destination.copy_(c.source);
  } catch (const std::exception& e) {
    return TorchErrorToStatus(absl::StatusCode::kInvalidArgument,
                              absl::StrCat("loading ", Describe()), e);
  }
  return absl::OkStatus();
}

}  // namespace ringleader
