// A trained model leaves in the forms PyTorch users load: Debian's
// /usr/bin/python3 loads the exported TorchScript with torch.jit.load and the
// safetensors file with a reader of the format, and both give the worker's
// outputs (check_export.py).
#include "worker/export/model_export.h"

#include <torch/torch.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "worker/model/builtin_models.h"
#include "worker/model/torchscript_model.h"

namespace ringleader {
namespace {

constexpr char kScript[] = "tests/worker/export/check_export.py";

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/", name);
}

bool HavePythonTorch() {
  return std::system(
             "/usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1") == 0;
}

void WriteRaw(const at::Tensor& t, const std::string& path) {
  const at::Tensor c = t.contiguous().to(at::kFloat);
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(c.data_ptr()), c.numel() * 4);
}

// A few SGD steps in training mode, so weights and BatchNorm's running
// statistics are no longer what the file held.
void Train(Model& model, const at::Tensor& x, int64_t classes) {
  torch::optim::SGD sgd(model.Parameters(), torch::optim::SGDOptions(0.1));
  model.Train(true);
  for (int i = 0; i < 3; ++i) {
    sgd.zero_grad();
    const at::Tensor y = torch::randint(classes, {x.size(0)}, torch::kLong);
    torch::nn::functional::cross_entropy(model.Forward(x).value(), y)
        .backward();
    sgd.step();
  }
  model.Train(false);
}

// Exports `model`, runs `x` through it here, and has Python check both
// files against that output.
void ExportAndCheckInPython(Model& model, const at::Tensor& x,
                            const std::string& name, bool eager) {
  v1::ExportSpec spec;
  spec.set_torchscript_path(TempPath(name + ".pt"));
  spec.set_safetensors_path(TempPath(name + ".safetensors"));
  ASSERT_TRUE(ExportModel(model, spec).ok());
  WriteRaw(x, TempPath(name + "-input.bin"));
  torch::NoGradGuard no_grad;
  WriteRaw(model.Forward(x).value(), TempPath(name + "-expected.bin"));
  const std::string command = absl::StrCat(
      "/usr/bin/python3 ", kScript, " check ", spec.torchscript_path(), " ",
      spec.safetensors_path(), " ", TempPath(name + "-input.bin"), " ",
      TempPath(name + "-expected.bin"), " ", absl::StrJoin(x.sizes(), ","),
      eager ? " --eager" : "");
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

TEST(ModelExportTest, UsersTorchScriptModelWithBatchNorm) {
  if (!HavePythonTorch()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy (install "
                    "python3-torch and python3-numpy)";
  }
  const std::string made = TempPath("user_model.pt");
  ASSERT_EQ(
      std::system(
          absl::StrCat("/usr/bin/python3 ", kScript, " make ", made).c_str()),
      0);
  absl::StatusOr<std::unique_ptr<Model>> model = LoadTorchScriptModel(made);
  ASSERT_TRUE(model.ok()) << model.status();
  torch::manual_seed(7);
  const at::Tensor x = torch::randn({4, 3, 8, 8});
  Train(**model, x, 5);
  ExportAndCheckInPython(**model, x, "user", /*eager=*/true);
}

TEST(ModelExportTest, BuiltinModelsExportAsTorchScript) {
  if (!HavePythonTorch()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy (install "
                    "python3-torch and python3-numpy)";
  }
  torch::manual_seed(8);
  ModelShape rgb;
  rgb.input_dims = {3, 20, 20};
  rgb.num_classes = 7;
  auto cnn = MakeCnn(1, rgb);
  ASSERT_TRUE(cnn.ok()) << cnn.status();
  const at::Tensor images = torch::randn({5, 3, 20, 20});
  Train(**cnn, images, 7);
  ExportAndCheckInPython(**cnn, images, "cnn", /*eager=*/false);

  auto mlp = MakeMlp({16, 8}, 2);
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  const at::Tensor grey = torch::randn({3, 1, 28, 28});
  Train(**mlp, grey, 10);
  ExportAndCheckInPython(**mlp, grey, "mlp", /*eager=*/false);
}

TEST(ModelExportTest, NothingToExportAndUnwritablePaths) {
  auto mlp = MakeMlp({4}, 1);
  ASSERT_TRUE(mlp.ok());
  EXPECT_TRUE(ExportModel(**mlp, v1::ExportSpec()).ok());
  v1::ExportSpec bad;
  bad.set_safetensors_path("/nonexistent-dir/weights.safetensors");
  const absl::Status s = ExportModel(**mlp, bad);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("/nonexistent-dir"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace ringleader
