#include "worker/model/torchscript_model.h"

#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/model/builtin_models.h"
#include "worker/model/model.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/", name);
}

// TorchScript modules are written here from C++ (jit::Module::define
// compiles the TorchScript source), so the tests need no Python.
torch::jit::Module Linear(int64_t in, const std::string& forward_body) {
  torch::jit::Module m("Linear");
  // As torch.jit.script gives every module (train()/eval() set it).
  m.register_attribute("training", c10::BoolType::get(), true);
  // Trainable, as nn.Parameter is in Python.
  m.register_parameter("weight",
                       (torch::randn({10, in}) * 0.01).requires_grad_(), false);
  m.register_parameter("bias", torch::zeros({10}).requires_grad_(), false);
  m.define(absl::StrCat("def forward(self, x):\n", forward_body, "\n"));
  return m;
}

constexpr char kLinearForward[] =
    "    return torch.matmul(torch.flatten(x, 1), self.weight.t()) + self.bias";

std::string Save(torch::jit::Module m, const std::string& name) {
  const std::string path = TempPath(name);
  m.save(path);
  return path;
}

std::unique_ptr<Model> MustLoad(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Model>> m = LoadTorchScriptModel(path);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

std::string LoadError(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Model>> m = LoadTorchScriptModel(path);
  EXPECT_FALSE(m.ok());
  return std::string(m.status().message());
}

TEST(TorchScriptModelTest, LoadsAndRuns) {
  const std::string path = Save(Linear(784, kLinearForward), "linear.pt");
  auto m = MustLoad(path);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->Describe(), "torchscript " + path);
  EXPECT_TRUE(m->is_training());
  std::vector<std::string> names;
  for (const NamedTensor& nt : m->NamedParameters()) names.push_back(nt.name);
  EXPECT_THAT(names, ElementsAre("weight", "bias"));
  EXPECT_EQ(m->NumParameters(), 7850);
  ASSERT_EQ(m->Parameters().size(), 2u);
  EXPECT_TRUE(m->Parameters()[0].requires_grad());
  absl::StatusOr<at::Tensor> out = m->Forward(torch::randn({5, 1, 28, 28}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->sizes().vec(), (std::vector<int64_t>{5, 10}));
  // Gradients reach the parameters.
  out->sum().backward();
  EXPECT_TRUE(m->Parameters()[0].grad().defined());
}

TEST(TorchScriptModelTest, NestedModulesSaveAndLoad) {
  torch::jit::Module outer("Outer");
  outer.register_module("inner", Linear(784, kLinearForward));
  outer.register_parameter("scale", torch::ones({1}).requires_grad_(), false);
  outer.define(
      "def forward(self, x):\n"
      "    return self.inner.forward(x) * self.scale\n");
  const std::string path = Save(outer, "outer.pt");
  auto a = MustLoad(path);
  auto b = MustLoad(path);
  ASSERT_NE(a, nullptr);
  std::vector<std::string> names;
  for (const NamedTensor& nt : a->NamedParameters()) names.push_back(nt.name);
  // Registration order, depth first: inner was registered before scale.
  EXPECT_THAT(names, ElementsAre("inner.weight", "inner.bias", "scale"));

  torch::NoGradGuard no_grad;
  b->Parameters()[1].fill_(3.0);
  torch::serialize::OutputArchive archive;
  ASSERT_TRUE(b->Save(archive).ok());
  std::ostringstream bytes;
  archive.save_to(bytes);
  torch::serialize::InputArchive in_archive;
  std::istringstream in(bytes.str());
  in_archive.load_from(in);
  ASSERT_TRUE(a->Load(in_archive).ok());
  EXPECT_TRUE(torch::equal(a->Parameters()[1], b->Parameters()[1]));
}

// Whether a model fits the data is checked on a real batch at job start
// (tests/worker/train/model_probe_test.cc); loading only checks the module.
TEST(TorchScriptModelTest, ForwardErrorsCarryTorchsReasonOnOneLine) {
  // Expects 100 features, gets 784: torch's own error is in the message.
  const std::string path = Save(Linear(100, kLinearForward), "narrow.pt");
  auto m = MustLoad(path);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<at::Tensor> out = m->Forward(torch::randn({2, 1, 28, 28}));
  ASSERT_FALSE(out.ok());
  const std::string error(out.status().message());
  EXPECT_THAT(error, HasSubstr("torchscript " + path + " forward failed"));
  EXPECT_THAT(error, HasSubstr("cannot be multiplied"));
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(TorchScriptModelTest, ForwardReturningATupleWithoutLoss) {
  const std::string path =
      Save(Linear(784,
                  "    y = torch.matmul(torch.flatten(x, 1), self.weight.t())\n"
                  "    return (y, y)"),
           "tuple.pt");
  auto m = MustLoad(path);
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(
      std::string(m->Forward(torch::randn({2, 1, 28, 28})).status().message()),
      HasSubstr("forward returned Tuple, not a Tensor"));
}

// LOSS_KIND_MODEL: forward(inputs..., targets) returns the loss alone,
// (logits, loss) as nanoGPT does, or a dict as Hugging Face does.
TEST(TorchScriptModelTest, ModelComputedLossForms) {
  const std::string head =
      "    y = torch.matmul(torch.flatten(x, 1), self.weight.t()) + self.bias\n"
      "    loss = torch.mean(y) + torch.mean(t.float())\n";
  struct Form {
    std::string body;
    bool has_logits;
  };
  const std::vector<Form> forms = {
      {head + "    return loss", false},
      {head + "    return (y, loss)", true},
      {head + "    return {\"loss\": loss, \"logits\": y}", true},
  };
  for (size_t i = 0; i < forms.size(); ++i) {
    SCOPED_TRACE(forms[i].body);
    torch::jit::Module lin("Linear");
    lin.register_parameter(
        "weight", (torch::randn({10, 784}) * 0.01).requires_grad_(), false);
    lin.register_parameter("bias", torch::zeros({10}).requires_grad_(), false);
    lin.define("def forward(self, x, t):\n" + forms[i].body + "\n");
    auto m = MustLoad(Save(lin, absl::StrCat("loss", i, ".pt")));
    ASSERT_NE(m, nullptr);
    const at::Tensor targets = torch::tensor({1, 2, 3}, torch::kLong);
    absl::StatusOr<ModelOutput> out =
        m->Forward({torch::randn({3, 1, 28, 28})}, targets);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_TRUE(out->loss.defined());
    EXPECT_EQ(out->loss.numel(), 1);
    EXPECT_EQ(out->output.defined(), forms[i].has_logits);
  }
}

// On the CPU a TorchScript model trains as the same nn.Module does eagerly:
// the graph executor's own autodiff would replace dropout(p=0) by a
// Bernoulli mask, drawing random numbers the eager module never draws (and
// examples/gpt's step took 16-20% longer that way under torch.jit.load in
// Python). The first call here trains with gradients: no probe without
// gradients came before it.
TEST(TorchScriptModelTest, TrainsOnTheCpuAsTheEagerModuleDoes) {
  torch::jit::Module m("DropoutZero");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter("weight", (torch::randn({8, 8}) * 0.1).requires_grad_(),
                       false);
  m.define(
      "def forward(self, x):\n"
      "    y = torch.gelu(torch.matmul(x, self.weight))\n"
      "    return torch.dropout(y, 0.0, self.training)\n");
  auto model = MustLoad(Save(m, "dropout_zero.pt"));
  ASSERT_NE(model, nullptr);
  const at::Tensor x = torch::randn({4, 8});
  torch::manual_seed(7);
  // Profiling runs, then what the executor would have optimized.
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<at::Tensor> out = model->Forward(x);
    ASSERT_TRUE(out.ok()) << out.status();
    out->sum().backward();
  }
  const at::Tensor drawn = torch::rand({1});
  torch::manual_seed(7);
  EXPECT_TRUE(torch::equal(drawn, torch::rand({1})))
      << "training drew random numbers";
  // The eager gradient of the same function.
  const at::Tensor w = model->Parameters()[0].detach().clone().requires_grad_();
  torch::gelu(torch::matmul(x, w)).sum().backward();
  EXPECT_TRUE(torch::allclose(model->Parameters()[0].grad(), w.grad() * 4));
  // The calling thread's executor setting is left as it was.
  EXPECT_TRUE(torch::jit::getGraphExecutorOptimize());
}

TEST(TorchScriptModelTest, ExportedTorchScriptKeepsTrainedWeights) {
  const std::string path = Save(Linear(784, kLinearForward), "trained.pt");
  auto m = MustLoad(path);
  ASSERT_NE(m, nullptr);
  {
    torch::NoGradGuard no_grad;
    m->Parameters()[1].fill_(0.5);  // "Training" changed the bias.
  }
  const std::string out_path = TempPath("exported.pt");
  ASSERT_TRUE(m->SaveTorchScript(out_path).ok());
  torch::jit::Module back = torch::jit::load(out_path);
  EXPECT_FALSE(back.is_training());
  const at::Tensor x = torch::randn({2, 1, 28, 28});
  m->Train(false);
  EXPECT_TRUE(
      torch::allclose(back.forward({x}).toTensor(), m->Forward(x).value()));
}

TEST(TorchScriptModelTest, ModuleWithoutForwardOrParameters) {
  torch::jit::Module no_forward("NoForward");
  no_forward.register_parameter("w", torch::ones({1}).requires_grad_(), false);
  EXPECT_THAT(LoadError(Save(no_forward, "no_forward.pt")),
              HasSubstr("has no forward method"));

  torch::jit::Module no_params("NoParams");
  no_params.define("def forward(self, x):\n    return x\n");
  EXPECT_THAT(LoadError(Save(no_params, "no_params.pt")),
              HasSubstr("has no parameters to train"));

  // torch::save of a tensor is a TorchScript archive, but not a model.
  const std::string tensor_path = TempPath("tensor.pt");
  torch::save(torch::ones({3}), tensor_path);
  EXPECT_THAT(LoadError(tensor_path), HasSubstr("has no forward method"));
}

TEST(TorchScriptModelTest, BadPaths) {
  const std::string missing = TempPath("missing.pt");
  absl::StatusOr<std::unique_ptr<Model>> m = LoadTorchScriptModel(missing);
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(m.status().message()), HasSubstr(missing));

  EXPECT_THAT(LoadError(::testing::TempDir()), HasSubstr("is not a file"));

  const std::string garbage = TempPath("garbage.pt");
  {
    std::ofstream out(garbage);
    out << "this is not a zip archive";
  }
  m = LoadTorchScriptModel(garbage);
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(m.status().message()),
              HasSubstr(garbage + ": not a TorchScript module"));
}

// With Debian's python3-torch, a module scripted in Python loads here, and
// Python's torch.manual_seed + nn.Linear layers give exactly the built-in
// MLP's initial weights: runs can be compared against a Python reference.
TEST(TorchScriptModelTest, PythonScriptedMlpMatchesBuiltinInit) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch (install the Debian "
                    "package python3-torch to run this test)";
  }
  const std::string path = TempPath("python_mlp.pt");
  const std::string script = TempPath("make_mlp.py");
  {
    std::ofstream out(script);
    out << "import sys, torch\n"
           "torch.manual_seed(1234)\n"
           "class Mlp(torch.nn.Module):\n"
           "    def __init__(self):\n"
           "        super().__init__()\n"
           "        self.fc0 = torch.nn.Linear(784, 256)\n"
           "        self.fc1 = torch.nn.Linear(256, 128)\n"
           "        self.fc2 = torch.nn.Linear(128, 10)\n"
           "    def forward(self, x):\n"
           "        x = torch.relu(self.fc0(torch.flatten(x, 1)))\n"
           "        return self.fc2(torch.relu(self.fc1(x)))\n"
           "torch.jit.script(Mlp()).save(sys.argv[1])\n";
  }
  ASSERT_EQ(std::system(("/usr/bin/python3 " + script + " " + path).c_str()),
            0);
  auto scripted = MustLoad(path);
  ASSERT_NE(scripted, nullptr);
  auto builtin = MakeMlp({256, 128}, 1234).value();
  const std::vector<NamedTensor> a = scripted->NamedParameters();
  const std::vector<NamedTensor> b = builtin->NamedParameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_TRUE(torch::equal(a[i].tensor, b[i].tensor)) << a[i].name;
  }
  const at::Tensor x = torch::randn({4, 1, 28, 28});
  EXPECT_TRUE(torch::allclose(scripted->Forward(x).value(),
                              builtin->Forward(x).value()));
}

}  // namespace
}  // namespace ringleader
