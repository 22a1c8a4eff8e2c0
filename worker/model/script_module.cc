#include "worker/model/script_module.h"

#include <ATen/core/grad_mode.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/api/module.h>

#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/atomic_file.h"
#include "worker/model/torch_status.h"

namespace ringleader {
namespace {

// Submodule `path` of `root` ("a.b"), created on first use with a
// `training` attribute as torch.nn.Module has (Python's .eval() sets it).
torch::jit::Module SubmoduleFor(
    torch::jit::Module& root, const std::vector<std::string>& path,
    const std::shared_ptr<torch::jit::CompilationUnit>& cu,
    std::map<std::string, torch::jit::Module>& made) {
  torch::jit::Module parent = root;
  std::string key;
  for (const std::string& part : path) {
    key = key.empty() ? part : absl::StrCat(key, ".", part);
    auto it = made.find(key);
    if (it == made.end()) {
      torch::jit::Module sub(
          c10::QualifiedName(absl::StrCat(
              "__torch__.ringleader.", absl::StrReplaceAll(key, {{".", "_"}}))),
          cu, /*shouldMangle=*/true);
      sub.register_attribute("training", c10::BoolType::get(), true);
      parent.register_module(part, sub);
      it = made.emplace(key, sub).first;
    }
    parent = it->second;
  }
  return parent;
}

}  // namespace

absl::StatusOr<torch::jit::Module> ScriptModuleOf(
    const std::string& name, const std::vector<NamedTensor>& parameters,
    const std::vector<NamedTensor>& buffers,
    const std::string& forward_source) {
  try {
    at::NoGradGuard no_grad;
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module root(
        c10::QualifiedName(absl::StrCat("__torch__.ringleader.", name)), cu,
        /*shouldMangle=*/true);
    root.register_attribute("training", c10::BoolType::get(), true);
    std::map<std::string, torch::jit::Module> made;
    for (const auto* list : {&parameters, &buffers}) {
      for (const NamedTensor& nt : *list) {
        std::vector<std::string> path = absl::StrSplit(nt.name, '.');
        const std::string leaf = path.back();
        path.pop_back();
        torch::jit::Module owner = SubmoduleFor(root, path, cu, made);
        at::Tensor copy = nt.tensor.detach().clone();
        if (list == &parameters) {
          owner.register_parameter(leaf, copy.requires_grad_(true), false);
        } else {
          owner.register_buffer(leaf, copy);
        }
      }
    }
    root.define(forward_source);
    root.eval();
    return root;
  } catch (const std::exception& e) {
    return TorchErrorToStatus(absl::StatusCode::kInvalidArgument,
                              absl::StrCat("scripting ", name), e);
  }
}

absl::Status SaveScriptModule(const torch::jit::Module& module,
                              const std::string& path) {
  // torch saves to a path: the temporary file's, then the shared finish.
  AtomicFile file(path);
  try {
    torch::jit::Module cpu = module.deepcopy();
    cpu.to(c10::Device(c10::kCPU));
    cpu.eval();  // For inference, as a user exports a trained model.
    cpu.save(file.temp_path());
  } catch (const std::exception& e) {
    return TorchErrorToStatus(absl::StatusCode::kInternal,
                              absl::StrCat("saving TorchScript to ", path), e);
  }
  return file.Commit();
}

}  // namespace ringleader
