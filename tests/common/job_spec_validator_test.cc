#include "common/job_spec_validator.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using ::testing::StartsWith;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

v1::JobSpec ValidSpec() {
  v1::JobSpec spec;
  spec.set_name("ok-job");
  spec.mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  spec.mutable_dataset()->set_format(v1::DATASET_FORMAT_IDX);
  spec.mutable_dataset()->set_path("/data/fashion-mnist");
  spec.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  spec.mutable_optimizer()->set_learning_rate(0.1);
  spec.mutable_optimizer()->set_momentum(0.9);
  spec.set_epochs(1);
  spec.set_batch_size(32);
  spec.set_min_workers(1);
  spec.set_max_workers(2);
  return spec;
}

v1::JobSpec Synthetic() {
  v1::JobSpec spec = ValidSpec();
  spec.mutable_dataset()->set_format(v1::DATASET_FORMAT_SYNTHETIC);
  spec.mutable_dataset()->clear_path();
  spec.mutable_dataset()->set_synthetic_train_size(1000);
  return spec;
}

v1::JobSpec TorchScript() {
  v1::JobSpec spec = ValidSpec();
  spec.mutable_model()->set_arch(v1::MODEL_ARCH_TORCHSCRIPT);
  spec.mutable_model()->set_torchscript_path("/models/net.pt");
  return spec;
}

// Images as .npy arrays, with a test split and a normalisation.
v1::JobSpec Npy() {
  v1::JobSpec spec = ValidSpec();
  v1::DatasetSpec* d = spec.mutable_dataset();
  d->set_format(v1::DATASET_FORMAT_NPY);
  d->clear_path();
  d->mutable_train()->add_inputs("/data/train_x.npy");
  d->mutable_train()->set_targets("/data/train_y.npy");
  d->mutable_test()->add_inputs("/data/test_x.npy");
  d->mutable_test()->set_targets("/data/test_y.npy");
  d->mutable_transform()->set_scale(1.0 / 255);
  d->mutable_transform()->add_mean(0.5);
  d->mutable_transform()->add_std(0.25);
  return spec;
}

// A language model on a token stream.
v1::JobSpec Tokens() {
  v1::JobSpec spec = ValidSpec();
  spec.mutable_model()->set_arch(v1::MODEL_ARCH_TORCHSCRIPT);
  spec.mutable_model()->set_torchscript_path("/models/gpt.pt");
  v1::DatasetSpec* d = spec.mutable_dataset();
  d->set_format(v1::DATASET_FORMAT_TOKENS);
  d->clear_path();
  d->set_train_tokens("/data/train.bin");
  d->set_test_tokens("/data/val.bin");
  d->set_token_dtype(v1::TOKEN_DTYPE_UINT16);
  d->set_block_size(256);
  spec.mutable_task()->set_kind(v1::TASK_KIND_LANGUAGE_MODEL);
  return spec;
}

// A TorchScript regression model on .npy arrays.
v1::JobSpec Regression() {
  v1::JobSpec spec = Npy();
  spec.mutable_model()->set_arch(v1::MODEL_ARCH_TORCHSCRIPT);
  spec.mutable_model()->set_torchscript_path("/models/reg.pt");
  spec.mutable_model()->clear_hidden_sizes();
  spec.mutable_task()->set_kind(v1::TASK_KIND_REGRESSION);
  return spec;
}

struct Case {
  const char* what;
  std::function<v1::JobSpec()> make;
  // Proto path the message must name right after the prefix; empty: valid.
  std::string field;
};

// A modified copy of `base`.
std::function<v1::JobSpec()> With(std::function<v1::JobSpec()> base,
                                  std::function<void(v1::JobSpec&)> edit) {
  return [base, edit] {
    v1::JobSpec spec = base();
    edit(spec);
    return spec;
  };
}
std::function<v1::JobSpec()> With(std::function<void(v1::JobSpec&)> edit) {
  return With(ValidSpec, edit);
}

std::vector<Case> Cases() {
  using S = v1::JobSpec&;
  const std::string n63(63, 'a');
  std::vector<Case> c = {
      {"valid base", ValidSpec, ""},
      {"valid synthetic", Synthetic, ""},
      {"valid torchscript", TorchScript, ""},
      // name
      {"name empty", With([](S s) { s.set_name(""); }), "name"},
      {"name upper", With([](S s) { s.set_name("Job"); }), "name"},
      {"name underscore", With([](S s) { s.set_name("a_b"); }), "name"},
      {"name leading dash", With([](S s) { s.set_name("-ab"); }), "name"},
      {"name trailing dash", With([](S s) { s.set_name("ab-"); }), "name"},
      {"name 64 chars", With([n63](S s) { s.set_name(n63 + "a"); }), "name"},
      {"name 63 chars", With([n63](S s) { s.set_name(n63); }), ""},
      {"name one char", With([](S s) { s.set_name("7"); }), ""},
      {"name inner dashes", With([](S s) { s.set_name("a--b"); }), ""},
      // model.arch
      {"arch unspecified", With([](S s) {
         s.mutable_model()->set_arch(v1::MODEL_ARCH_UNSPECIFIED);
       }),
       "model.arch"},
      {"arch unknown number", With([](S s) {
         s.mutable_model()->set_arch(static_cast<v1::ModelArch>(42));
       }),
       "model.arch"},
      {"cnn",
       With([](S s) { s.mutable_model()->set_arch(v1::MODEL_ARCH_CNN); }), ""},
      // model.hidden_sizes
      {"hidden zero", With([](S s) { s.mutable_model()->add_hidden_sizes(0); }),
       "model.hidden_sizes[0]"},
      {"hidden negative", With([](S s) {
         s.mutable_model()->add_hidden_sizes(8);
         s.mutable_model()->add_hidden_sizes(-3);
       }),
       "model.hidden_sizes[1]"},
      {"hidden too wide",
       With([](S s) { s.mutable_model()->add_hidden_sizes(65537); }),
       "model.hidden_sizes[0]"},
      {"hidden widest", With([](S s) {
         s.mutable_model()->add_hidden_sizes(65536);
         s.mutable_model()->add_hidden_sizes(1);
       }),
       ""},
      {"hidden 17 layers", With([](S s) {
         for (int i = 0; i < 17; ++i) s.mutable_model()->add_hidden_sizes(4);
       }),
       "model.hidden_sizes"},
      {"hidden 16 layers", With([](S s) {
         for (int i = 0; i < 16; ++i) s.mutable_model()->add_hidden_sizes(4);
       }),
       ""},
      {"hidden on cnn", With([](S s) {
         s.mutable_model()->set_arch(v1::MODEL_ARCH_CNN);
         s.mutable_model()->add_hidden_sizes(4);
       }),
       "model.hidden_sizes"},
      {"hidden on torchscript",
       With(TorchScript, [](S s) { s.mutable_model()->add_hidden_sizes(4); }),
       "model.hidden_sizes"},
      // model.torchscript_path
      {"torchscript without path",
       With(TorchScript,
            [](S s) { s.mutable_model()->clear_torchscript_path(); }),
       "model.torchscript_path"},
      {"torchscript wrong extension",
       With(
           TorchScript,
           [](S s) { s.mutable_model()->set_torchscript_path("/m/net.onnx"); }),
       "model.torchscript_path"},
      {"torchscript bare extension",
       With(TorchScript,
            [](S s) { s.mutable_model()->set_torchscript_path(".pt"); }),
       "model.torchscript_path"},
      {"torchscript hidden file",
       With(TorchScript,
            [](S s) { s.mutable_model()->set_torchscript_path("/m/.pth"); }),
       "model.torchscript_path"},
      {"torchscript pth",
       With(TorchScript,
            [](S s) { s.mutable_model()->set_torchscript_path("net.pth"); }),
       ""},
      {"path on mlp",
       With([](S s) { s.mutable_model()->set_torchscript_path("/m/net.pt"); }),
       "model.torchscript_path"},
      // dataset.format
      {"format unspecified", With([](S s) {
         s.mutable_dataset()->set_format(v1::DATASET_FORMAT_UNSPECIFIED);
       }),
       "dataset.format"},
      {"format unknown number", With([](S s) {
         s.mutable_dataset()->set_format(static_cast<v1::DatasetFormat>(9));
       }),
       "dataset.format"},
      // dataset.path
      {"idx without path", With([](S s) { s.mutable_dataset()->clear_path(); }),
       "dataset.path"},
      {"synthetic with path",
       With(Synthetic, [](S s) { s.mutable_dataset()->set_path("/data"); }),
       "dataset.path"},
      // dataset.synthetic_train_size
      {"synthetic train 0",
       With(Synthetic,
            [](S s) { s.mutable_dataset()->set_synthetic_train_size(0); }),
       "dataset.synthetic_train_size"},
      {"synthetic train negative",
       With(Synthetic,
            [](S s) { s.mutable_dataset()->set_synthetic_train_size(-5); }),
       "dataset.synthetic_train_size"},
      {"synthetic train too big",
       With(Synthetic,
            [](S s) {
              s.mutable_dataset()->set_synthetic_train_size(100000001);
            }),
       "dataset.synthetic_train_size"},
      {"synthetic train max",
       With(Synthetic,
            [](S s) {
              s.mutable_dataset()->set_synthetic_train_size(100000000);
              s.mutable_dataset()->set_synthetic_test_size(100000000);
            }),
       ""},
      {"idx with train size",
       With([](S s) { s.mutable_dataset()->set_synthetic_train_size(10); }),
       "dataset.synthetic_train_size"},
      // dataset.synthetic_test_size
      {"synthetic test negative",
       With(Synthetic,
            [](S s) { s.mutable_dataset()->set_synthetic_test_size(-1); }),
       "dataset.synthetic_test_size"},
      {"synthetic test too big",
       With(Synthetic,
            [](S s) {
              s.mutable_dataset()->set_synthetic_test_size(100000001);
            }),
       "dataset.synthetic_test_size"},
      {"idx with test size",
       With([](S s) { s.mutable_dataset()->set_synthetic_test_size(10); }),
       "dataset.synthetic_test_size"},
      {"shuffle and drop_last are free", With([](S s) {
         s.mutable_dataset()->set_shuffle(true);
         s.mutable_dataset()->set_drop_last(true);
       }),
       ""},
      // dataset: NPY
      {"valid npy", Npy, ""},
      {"npy without test or transform",
       With(Npy,
            [](S s) {
              s.mutable_dataset()->clear_test();
              s.mutable_dataset()->clear_transform();
            }),
       ""},
      {"npy 16 inputs",
       With(Npy,
            [](S s) {
              auto* d = s.mutable_dataset();
              for (int i = 1; i < 16; ++i) {
                d->mutable_train()->add_inputs("/x.npy");
                d->mutable_test()->add_inputs("/y.npy");
              }
            }),
       ""},
      {"npy no train inputs",
       With(Npy,
            [](S s) { s.mutable_dataset()->mutable_train()->clear_inputs(); }),
       "dataset.train.inputs"},
      {"npy 17 inputs",
       With(Npy,
            [](S s) {
              for (int i = 1; i < 17; ++i) {
                s.mutable_dataset()->mutable_train()->add_inputs("/x.npy");
              }
            }),
       "dataset.train.inputs"},
      {"npy empty input path",
       With(Npy,
            [](S s) { s.mutable_dataset()->mutable_train()->add_inputs(""); }),
       "dataset.train.inputs[1]"},
      {"npy input path too long",
       With(Npy,
            [](S s) {
              s.mutable_dataset()->mutable_train()->set_inputs(
                  0, "/" + std::string(4096, 'a'));
            }),
       "dataset.train.inputs[0]"},
      {"npy input path 4096 bytes",
       With(Npy,
            [](S s) {
              s.mutable_dataset()->mutable_train()->set_inputs(
                  0, "/" + std::string(4095, 'a'));
            }),
       ""},
      {"npy input path with nul",
       With(Npy,
            [](S s) {
              s.mutable_dataset()->mutable_train()->set_inputs(
                  0, std::string("/a\0b", 4));
            }),
       "dataset.train.inputs[0]"},
      {"npy no train targets",
       With(Npy,
            [](S s) { s.mutable_dataset()->mutable_train()->clear_targets(); }),
       "dataset.train.targets"},
      {"npy test without targets",
       With(Npy,
            [](S s) { s.mutable_dataset()->mutable_test()->clear_targets(); }),
       "dataset.test.targets"},
      {"npy test targets only",
       With(Npy,
            [](S s) { s.mutable_dataset()->mutable_test()->clear_inputs(); }),
       "dataset.test.inputs"},
      {"npy test with fewer inputs",
       With(Npy,
            [](S s) {
              s.mutable_dataset()->mutable_train()->add_inputs("/mask.npy");
            }),
       "dataset.test.inputs"},
      {"npy with path",
       With(Npy, [](S s) { s.mutable_dataset()->set_path("/data"); }),
       "dataset.path"},
      {"npy with synthetic size",
       With(Npy, [](S s) { s.mutable_dataset()->set_synthetic_test_size(10); }),
       "dataset.synthetic_test_size"},
      {"npy with train tokens",
       With(Npy, [](S s) { s.mutable_dataset()->set_train_tokens("/t.bin"); }),
       "dataset.train_tokens"},
      {"npy with block size",
       With(Npy, [](S s) { s.mutable_dataset()->set_block_size(8); }),
       "dataset.block_size"},
      {"npy with token dtype",
       With(Npy,
            [](S s) {
              s.mutable_dataset()->set_token_dtype(v1::TOKEN_DTYPE_UINT32);
            }),
       "dataset.token_dtype"},
      // dataset.transform
      {"transform scale negative",
       With(Npy,
            [](S s) {
              s.mutable_dataset()->mutable_transform()->set_scale(-1);
            }),
       "dataset.transform.scale"},
      {"transform scale nan",
       With(Npy,
            [](S s) {
              s.mutable_dataset()->mutable_transform()->set_scale(kNaN);
            }),
       "dataset.transform.scale"},
      {"transform scale inf",
       With(Npy,
            [](S s) {
              s.mutable_dataset()->mutable_transform()->set_scale(kInf);
            }),
       "dataset.transform.scale"},
      {"transform std missing",
       With(Npy,
            [](S s) { s.mutable_dataset()->mutable_transform()->clear_std(); }),
       "dataset.transform.std"},
      {"transform 65 channels",
       With(Npy,
            [](S s) {
              auto* t = s.mutable_dataset()->mutable_transform();
              for (int c = 1; c < 65; ++c) {
                t->add_mean(0);
                t->add_std(1);
              }
            }),
       "dataset.transform.mean"},
      {"transform 64 channels",
       With(Npy,
            [](S s) {
              auto* t = s.mutable_dataset()->mutable_transform();
              for (int c = 1; c < 64; ++c) {
                t->add_mean(0);
                t->add_std(1);
              }
            }),
       ""},
      {"transform std zero",
       With(Npy,
            [](S s) {
              s.mutable_dataset()->mutable_transform()->set_std(0, 0);
            }),
       "dataset.transform.std[0]"},
      {"transform std nan",
       With(Npy,
            [](S s) {
              s.mutable_dataset()->mutable_transform()->set_std(0, kNaN);
            }),
       "dataset.transform.std[0]"},
      {"transform mean inf",
       With(Npy,
            [](S s) {
              s.mutable_dataset()->mutable_transform()->set_mean(0, -kInf);
            }),
       "dataset.transform.mean[0]"},
      {"transform on idx", With([](S s) {
         s.mutable_dataset()->mutable_transform()->set_scale(0.5);
       }),
       "dataset.transform"},
      // dataset: TOKENS
      {"valid tokens", Tokens, ""},
      {"tokens without test, dtype from the file",
       With(Tokens,
            [](S s) {
              auto* d = s.mutable_dataset();
              d->clear_test_tokens();
              d->clear_token_dtype();
            }),
       ""},
      {"tokens without train",
       With(Tokens, [](S s) { s.mutable_dataset()->clear_train_tokens(); }),
       "dataset.train_tokens"},
      {"tokens train path too long",
       With(Tokens,
            [](S s) {
              s.mutable_dataset()->set_train_tokens(std::string(4097, 'a'));
            }),
       "dataset.train_tokens"},
      {"tokens test path too long",
       With(Tokens,
            [](S s) {
              s.mutable_dataset()->set_test_tokens(std::string(4097, 'a'));
            }),
       "dataset.test_tokens"},
      {"tokens dtype unknown",
       With(Tokens,
            [](S s) {
              s.mutable_dataset()->set_token_dtype(
                  static_cast<v1::TokenDtype>(7));
            }),
       "dataset.token_dtype"},
      {"tokens block size 0",
       With(Tokens, [](S s) { s.mutable_dataset()->set_block_size(0); }),
       "dataset.block_size"},
      {"tokens block size too big",
       With(Tokens,
            [](S s) { s.mutable_dataset()->set_block_size((1 << 20) + 1); }),
       "dataset.block_size"},
      {"tokens block size max",
       With(Tokens, [](S s) { s.mutable_dataset()->set_block_size(1 << 20); }),
       ""},
      {"tokens with path",
       With(Tokens, [](S s) { s.mutable_dataset()->set_path("/d"); }),
       "dataset.path"},
      {"tokens with npy train",
       With(Tokens,
            [](S s) {
              s.mutable_dataset()->mutable_train()->add_inputs("/x.npy");
            }),
       "dataset.train"},
      {"tokens with transform",
       With(Tokens,
            [](S s) { s.mutable_dataset()->mutable_transform()->add_mean(1); }),
       "dataset.transform"},
      {"tokens with synthetic size",
       With(Tokens,
            [](S s) { s.mutable_dataset()->set_synthetic_train_size(5); }),
       "dataset.synthetic_train_size"},
      {"tokens with mlp",
       With(Tokens,
            [](S s) {
              s.mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
              s.mutable_model()->clear_torchscript_path();
              s.mutable_task()->clear_kind();
            }),
       "model.arch"},
      {"tokens with cnn",
       With(Tokens,
            [](S s) {
              s.mutable_model()->set_arch(v1::MODEL_ARCH_CNN);
              s.mutable_model()->clear_torchscript_path();
            }),
       "model.arch"},
      // dataset: IDX and SYNTHETIC take none of the new fields.
      {"idx with npy targets", With([](S s) {
         s.mutable_dataset()->mutable_train()->set_targets("/y.npy");
       }),
       "dataset.train"},
      {"idx with npy test", With([](S s) {
         s.mutable_dataset()->mutable_test()->add_inputs("/x.npy");
       }),
       "dataset.test"},
      {"idx with test tokens",
       With([](S s) { s.mutable_dataset()->set_test_tokens("/v.bin"); }),
       "dataset.test_tokens"},
      {"synthetic with block size",
       With(Synthetic, [](S s) { s.mutable_dataset()->set_block_size(64); }),
       "dataset.block_size"},
      {"synthetic with token dtype",
       With(Synthetic,
            [](S s) {
              s.mutable_dataset()->set_token_dtype(v1::TOKEN_DTYPE_UINT16);
            }),
       "dataset.token_dtype"},
      {"idx path too long",
       With([](S s) { s.mutable_dataset()->set_path(std::string(4097, 'd')); }),
       "dataset.path"},
      {"empty npy messages are no setting", With([](S s) {
         s.mutable_dataset()->mutable_train();
         s.mutable_dataset()->mutable_transform();
       }),
       ""},
      // optimizer.kind
      {"optimizer unspecified", With([](S s) {
         s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_UNSPECIFIED);
       }),
       "optimizer.kind"},
      {"optimizer unknown number", With([](S s) {
         s.mutable_optimizer()->set_kind(static_cast<v1::OptimizerKind>(3));
       }),
       "optimizer.kind"},
      // optimizer.learning_rate
      {"lr zero",
       With([](S s) { s.mutable_optimizer()->set_learning_rate(0); }),
       "optimizer.learning_rate"},
      {"lr nan",
       With([](S s) { s.mutable_optimizer()->set_learning_rate(kNaN); }),
       "optimizer.learning_rate"},
      {"lr inf",
       With([](S s) { s.mutable_optimizer()->set_learning_rate(kInf); }),
       "optimizer.learning_rate"},
      {"lr above 10",
       With([](S s) { s.mutable_optimizer()->set_learning_rate(10.5); }),
       "optimizer.learning_rate"},
      {"lr 10", With([](S s) { s.mutable_optimizer()->set_learning_rate(10); }),
       ""},
      // optimizer.momentum
      {"momentum 1", With([](S s) { s.mutable_optimizer()->set_momentum(1); }),
       "optimizer.momentum"},
      {"momentum negative",
       With([](S s) { s.mutable_optimizer()->set_momentum(-0.1); }),
       "optimizer.momentum"},
      {"momentum nan",
       With([](S s) { s.mutable_optimizer()->set_momentum(kNaN); }),
       "optimizer.momentum"},
      {"adam with momentum", With([](S s) {
         s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_ADAM);
       }),
       "optimizer.momentum"},
      {"adam without momentum", With([](S s) {
         s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_ADAM);
         s.mutable_optimizer()->set_momentum(0);
       }),
       ""},
      // optimizer.weight_decay
      {"weight decay negative",
       With([](S s) { s.mutable_optimizer()->set_weight_decay(-0.01); }),
       "optimizer.weight_decay"},
      {"weight decay above 1",
       With([](S s) { s.mutable_optimizer()->set_weight_decay(1.5); }),
       "optimizer.weight_decay"},
      {"weight decay nan",
       With([](S s) { s.mutable_optimizer()->set_weight_decay(kNaN); }),
       "optimizer.weight_decay"},
      {"weight decay inf",
       With([](S s) { s.mutable_optimizer()->set_weight_decay(kInf); }),
       "optimizer.weight_decay"},
      {"weight decay 1",
       With([](S s) { s.mutable_optimizer()->set_weight_decay(1); }), ""},
      // epochs, batch_size
      {"epochs 0", With([](S s) { s.set_epochs(0); }), "epochs"},
      {"epochs too many", With([](S s) { s.set_epochs(100001); }), "epochs"},
      {"epochs max", With([](S s) { s.set_epochs(100000); }), ""},
      {"batch 0", With([](S s) { s.set_batch_size(0); }), "batch_size"},
      {"batch too big", With([](S s) { s.set_batch_size(65537); }),
       "batch_size"},
      {"batch max", With([](S s) { s.set_batch_size(65536); }), ""},
      // min_workers, max_workers
      {"min workers 0", With([](S s) { s.set_min_workers(0); }), "min_workers"},
      {"max below min", With([](S s) {
         s.set_min_workers(3);
         s.set_max_workers(2);
       }),
       "max_workers"},
      {"max workers too many", With([](S s) { s.set_max_workers(4097); }),
       "max_workers"},
      {"max workers max", With([](S s) {
         s.set_min_workers(4096);
         s.set_max_workers(4096);
       }),
       ""},
      // seed
      {"any seed",
       With([](S s) { s.set_seed(std::numeric_limits<uint64_t>::max()); }), ""},
      // checkpoint_dir
      {"checkpoint dir relative",
       With([](S s) { s.set_checkpoint_dir("ckpt"); }), "checkpoint_dir"},
      {"checkpoint dir dotdot",
       With([](S s) { s.set_checkpoint_dir("/a/../b"); }), "checkpoint_dir"},
      {"checkpoint dir trailing dotdot",
       With([](S s) { s.set_checkpoint_dir("/a/.."); }), "checkpoint_dir"},
      {"checkpoint dir nul",
       With([](S s) { s.set_checkpoint_dir(std::string("/a\0b", 4)); }),
       "checkpoint_dir"},
      {"checkpoint dir dots in names",
       With([](S s) { s.set_checkpoint_dir("/a..b/./c.../"); }), ""},
      // checkpoint_every_steps
      {"checkpoint every negative", With([](S s) {
         s.set_checkpoint_dir("/ckpt");
         s.set_checkpoint_every_steps(-1);
       }),
       "checkpoint_every_steps"},
      {"checkpoint every without dir",
       With([](S s) { s.set_checkpoint_every_steps(100); }),
       "checkpoint_every_steps"},
      {"checkpoint every with dir", With([](S s) {
         s.set_checkpoint_dir("/ckpt");
         s.set_checkpoint_every_steps(100);
       }),
       ""},
      // progress_every_steps
      {"progress negative", With([](S s) { s.set_progress_every_steps(-1); }),
       "progress_every_steps"},
      {"progress too big",
       With([](S s) { s.set_progress_every_steps(1000001); }),
       "progress_every_steps"},
      {"progress max", With([](S s) { s.set_progress_every_steps(1000000); }),
       ""},
      // progress_min_interval_ms
      {"progress interval negative",
       With([](S s) { s.set_progress_min_interval_ms(-1); }),
       "progress_min_interval_ms"},
      {"progress interval over an hour",
       With([](S s) { s.set_progress_min_interval_ms(3600001); }),
       "progress_min_interval_ms"},
      {"progress interval an hour",
       With([](S s) { s.set_progress_min_interval_ms(3600000); }), ""},
      // max_restarts
      {"restarts negative", With([](S s) { s.set_max_restarts(-1); }),
       "max_restarts"},
      {"restarts too many", With([](S s) { s.set_max_restarts(1001); }),
       "max_restarts"},
      {"restarts max", With([](S s) { s.set_max_restarts(1000); }), ""},
      // device
      {"device unknown number",
       With([](S s) { s.set_device(static_cast<v1::DeviceKind>(7)); }),
       "device"},
      {"device negative",
       With([](S s) { s.set_device(static_cast<v1::DeviceKind>(-1)); }),
       "device"},
      {"device cuda", With([](S s) { s.set_device(v1::DEVICE_KIND_CUDA); }),
       ""},
      {"device unspecified",
       With([](S s) { s.set_device(v1::DEVICE_KIND_UNSPECIFIED); }), ""},
      // rendezvous_last_call_ms, rendezvous_timeout_ms
      {"last call negative",
       With([](S s) { s.set_rendezvous_last_call_ms(-1); }),
       "rendezvous_last_call_ms"},
      {"last call too long",
       With([](S s) { s.set_rendezvous_last_call_ms(600001); }),
       "rendezvous_last_call_ms"},
      {"last call max",
       With([](S s) { s.set_rendezvous_last_call_ms(600000); }), ""},
      {"timeout negative", With([](S s) { s.set_rendezvous_timeout_ms(-1); }),
       "rendezvous_timeout_ms"},
      {"timeout too long",
       With([](S s) { s.set_rendezvous_timeout_ms(86400001); }),
       "rendezvous_timeout_ms"},
      {"timeout max", With([](S s) { s.set_rendezvous_timeout_ms(86400000); }),
       ""},
      // resume
      {"resume without dir", With([](S s) { s.set_resume(true); }), "resume"},
      {"resume with dir", With([](S s) {
         s.set_resume(true);
         s.set_checkpoint_dir("/ckpt");
       }),
       ""},
      // gradient_accumulation_steps
      {"accumulation negative",
       With([](S s) { s.set_gradient_accumulation_steps(-1); }),
       "gradient_accumulation_steps"},
      {"accumulation too many",
       With([](S s) { s.set_gradient_accumulation_steps(1025); }),
       "gradient_accumulation_steps"},
      {"accumulation max",
       With([](S s) { s.set_gradient_accumulation_steps(1024); }), ""},
      // ddp
      {"bucket cap too small",
       With([](S s) { s.mutable_ddp()->set_bucket_cap_bytes(1023); }),
       "ddp.bucket_cap_bytes"},
      {"bucket cap negative",
       With([](S s) { s.mutable_ddp()->set_bucket_cap_bytes(-5); }),
       "ddp.bucket_cap_bytes"},
      {"first bucket too big", With([](S s) {
         s.mutable_ddp()->set_first_bucket_bytes((int64_t{1} << 30) + 1);
       }),
       "ddp.first_bucket_bytes"},
      {"buckets in range", With([](S s) {
         s.mutable_ddp()->set_bucket_cap_bytes(1024);
         s.mutable_ddp()->set_first_bucket_bytes(int64_t{1} << 30);
         s.mutable_ddp()->set_allreduce_after_backward(true);
       }),
       ""},
      {"cpu transport unknown", With([](S s) {
         s.mutable_ddp()->set_cpu_transport(static_cast<v1::CpuTransport>(9));
       }),
       "ddp.cpu_transport"},
      {"cpu transport shm", With([](S s) {
         s.mutable_ddp()->set_cpu_transport(v1::CPU_TRANSPORT_SHM);
       }),
       ""},
      {"gradient compression unknown", With([](S s) {
         s.mutable_ddp()->set_gradient_compression(
             static_cast<v1::GradientCompression>(3));
       }),
       "ddp.gradient_compression"},
      {"gradient compression negative", With([](S s) {
         s.mutable_ddp()->set_gradient_compression(
             static_cast<v1::GradientCompression>(-1));
       }),
       "ddp.gradient_compression"},
      {"gradient compression bf16 over gloo", With([](S s) {
         s.mutable_ddp()->set_cpu_transport(v1::CPU_TRANSPORT_GLOO);
         s.mutable_ddp()->set_gradient_compression(
             v1::GRADIENT_COMPRESSION_BF16);
       }),
       ""},
      {"gradient compression fp16 on cuda", With([](S s) {
         s.set_device(v1::DEVICE_KIND_CUDA);
         s.mutable_ddp()->set_gradient_compression(
             v1::GRADIENT_COMPRESSION_FP16);
       }),
       ""},
      // timeline_dir, timeline_steps
      {"timeline dir relative", With([](S s) { s.set_timeline_dir("tl"); }),
       "timeline_dir"},
      {"timeline dir dotdot",
       With([](S s) { s.set_timeline_dir("/tmp/../etc"); }), "timeline_dir"},
      {"timeline steps negative", With([](S s) {
         s.set_timeline_dir("/tmp/tl");
         s.set_timeline_steps(-1);
       }),
       "timeline_steps"},
      {"timeline steps too big", With([](S s) {
         s.set_timeline_dir("/tmp/tl");
         s.set_timeline_steps(100001);
       }),
       "timeline_steps"},
      {"timeline steps without dir",
       With([](S s) { s.set_timeline_steps(10); }), "timeline_steps"},
      {"timeline enabled", With([](S s) {
         s.set_timeline_dir("/tmp/tl");
         s.set_timeline_steps(100000);
       }),
       ""},
      // task
      {"classification explicit", With([](S s) {
         s.mutable_task()->set_kind(v1::TASK_KIND_CLASSIFICATION);
         s.mutable_task()->set_loss(v1::LOSS_KIND_CROSS_ENTROPY);
         s.mutable_task()->set_label_smoothing(0.1);
         s.mutable_task()->set_ignore_index(-1);
         s.mutable_task()->set_top_k(3);
         s.mutable_task()->set_num_classes(10);
       }),
       ""},
      {"task kind unknown", With([](S s) {
         s.mutable_task()->set_kind(static_cast<v1::TaskKind>(9));
       }),
       "task.kind"},
      {"task loss unknown", With([](S s) {
         s.mutable_task()->set_loss(static_cast<v1::LossKind>(-2));
       }),
       "task.loss"},
      {"mlp language model", With([](S s) {
         s.mutable_task()->set_kind(v1::TASK_KIND_LANGUAGE_MODEL);
       }),
       "task.kind"},
      {"cnn regression",
       With(Npy,
            [](S s) {
              s.mutable_model()->set_arch(v1::MODEL_ARCH_CNN);
              s.mutable_model()->clear_hidden_sizes();
              s.mutable_task()->set_kind(v1::TASK_KIND_REGRESSION);
            }),
       "task.kind"},
      {"mlp model loss",
       With([](S s) { s.mutable_task()->set_loss(v1::LOSS_KIND_MODEL); }),
       "task.loss"},
      {"torchscript model loss",
       With(Tokens,
            [](S s) {
              s.mutable_task()->set_loss(v1::LOSS_KIND_MODEL);
              s.mutable_task()->set_ignore_index(-1);
            }),
       ""},
      {"valid regression", Regression, ""},
      {"regression l1",
       With(Regression,
            [](S s) { s.mutable_task()->set_loss(v1::LOSS_KIND_L1); }),
       ""},
      {"regression cross entropy",
       With(Regression,
            [](S s) {
              s.mutable_task()->set_loss(v1::LOSS_KIND_CROSS_ENTROPY);
            }),
       "task.loss"},
      {"classification mse",
       With([](S s) { s.mutable_task()->set_loss(v1::LOSS_KIND_MSE); }),
       "task.loss"},
      {"language model l1",
       With(Tokens, [](S s) { s.mutable_task()->set_loss(v1::LOSS_KIND_L1); }),
       "task.loss"},
      {"ignore index with mse",
       With(Regression, [](S s) { s.mutable_task()->set_ignore_index(-100); }),
       "task.ignore_index"},
      {"ignore index zero with cross entropy",
       With([](S s) { s.mutable_task()->set_ignore_index(0); }), ""},
      {"label smoothing 1",
       With([](S s) { s.mutable_task()->set_label_smoothing(1); }),
       "task.label_smoothing"},
      {"label smoothing negative",
       With([](S s) { s.mutable_task()->set_label_smoothing(-0.1); }),
       "task.label_smoothing"},
      {"label smoothing nan",
       With([](S s) { s.mutable_task()->set_label_smoothing(kNaN); }),
       "task.label_smoothing"},
      {"label smoothing with l1",
       With(Regression,
            [](S s) {
              s.mutable_task()->set_loss(v1::LOSS_KIND_L1);
              s.mutable_task()->set_label_smoothing(0.1);
            }),
       "task.label_smoothing"},
      {"top k negative", With([](S s) { s.mutable_task()->set_top_k(-1); }),
       "task.top_k"},
      {"top k too big", With([](S s) { s.mutable_task()->set_top_k(1001); }),
       "task.top_k"},
      {"top k max", With([](S s) { s.mutable_task()->set_top_k(1000); }), ""},
      {"top k not below classes", With([](S s) {
         s.mutable_task()->set_top_k(10);
         s.mutable_task()->set_num_classes(10);
       }),
       "task.top_k"},
      {"top k with regression",
       With(Regression, [](S s) { s.mutable_task()->set_top_k(5); }),
       "task.top_k"},
      {"classes negative",
       With([](S s) { s.mutable_task()->set_num_classes(-1); }),
       "task.num_classes"},
      {"classes too many",
       With([](S s) { s.mutable_task()->set_num_classes((1 << 24) + 1); }),
       "task.num_classes"},
      {"classes max",
       With(Tokens, [](S s) { s.mutable_task()->set_num_classes(1 << 24); }),
       ""},
      {"classes with regression",
       With(Regression, [](S s) { s.mutable_task()->set_num_classes(3); }),
       "task.num_classes"},
      // export
      {"export both", With([](S s) {
         s.mutable_export_()->set_torchscript_path("/out/model.pt");
         s.mutable_export_()->set_safetensors_path("/out/model.safetensors");
       }),
       ""},
      {"export relative",
       With([](S s) { s.mutable_export_()->set_torchscript_path("model.pt"); }),
       "export.torchscript_path"},
      {"export dotdot", With([](S s) {
         s.mutable_export_()->set_safetensors_path("/out/../m.safetensors");
       }),
       "export.safetensors_path"},
      {"export too long", With([](S s) {
         s.mutable_export_()->set_torchscript_path("/" +
                                                   std::string(4096, 'm'));
       }),
       "export.torchscript_path"},
      {"export directory",
       With([](S s) { s.mutable_export_()->set_torchscript_path("/out/"); }),
       "export.torchscript_path"},
      {"export same file", With([](S s) {
         s.mutable_export_()->set_torchscript_path("/out/m");
         s.mutable_export_()->set_safetensors_path("/out/m");
       }),
       "export.safetensors_path"},
  };
  return c;
}

TEST(JobSpecValidatorTest, EveryRuleNamesItsField) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.what);
    const v1::JobSpec spec = c.make();
    const absl::Status s = ValidateJobSpec(spec);
    if (c.field.empty()) {
      EXPECT_TRUE(s.ok()) << s;
      // The same spec with defaults applied is valid too.
      EXPECT_TRUE(ValidateJobSpec(WithDefaults(spec)).ok());
      continue;
    }
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    // The field path comes right after the prefix, followed by the rule.
    EXPECT_THAT(std::string(s.message()),
                StartsWith("invalid job spec: " + c.field + " "));
    EXPECT_TRUE(absl::StrContains(s.message(), "(got ")) << s;
  }
}

TEST(JobSpecValidatorTest, GradientCompressionMessageListsTheValues) {
  v1::JobSpec spec = ValidSpec();
  spec.mutable_ddp()->set_gradient_compression(
      static_cast<v1::GradientCompression>(7));
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: ddp.gradient_compression must be one of "
            "GRADIENT_COMPRESSION_NONE, GRADIENT_COMPRESSION_FP16, "
            "GRADIENT_COMPRESSION_BF16 (got 7)");
}

TEST(JobSpecValidatorTest, MessagesAreExact) {
  v1::JobSpec spec = ValidSpec();
  spec.mutable_optimizer()->set_learning_rate(-1);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: optimizer.learning_rate must be > 0 and finite "
            "(got -1)");

  spec = ValidSpec();
  spec.set_name("Bad\nName");
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: name must match "
            "[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])? (got \"Bad\\nName\")");

  spec = ValidSpec();
  spec.mutable_model()->set_arch(v1::MODEL_ARCH_UNSPECIFIED);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: model.arch must be one of MODEL_ARCH_MLP, "
            "MODEL_ARCH_CNN, MODEL_ARCH_TORCHSCRIPT (got "
            "MODEL_ARCH_UNSPECIFIED)");

  spec = ValidSpec();
  spec.set_min_workers(3);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: max_workers must be >= min_workers (got 2 < 3)");
}

TEST(JobSpecValidatorTest, NewFieldMessagesAreExact) {
  v1::JobSpec spec = Tokens();
  spec.mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  spec.mutable_model()->clear_torchscript_path();
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: model.arch must be MODEL_ARCH_TORCHSCRIPT with "
            "DATASET_FORMAT_TOKENS: built-in models take images; use a "
            "TorchScript model for token data (got MODEL_ARCH_MLP)");

  spec = Npy();
  spec.mutable_dataset()->set_block_size(128);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: dataset.block_size is only valid with "
            "DATASET_FORMAT_TOKENS (got 128 with DATASET_FORMAT_NPY)");

  spec = Npy();
  spec.mutable_dataset()->mutable_test()->add_inputs("/m.npy");
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: dataset.test.inputs must name as many files as "
            "dataset.train.inputs (got 2 vs 1)");

  spec = Regression();
  spec.mutable_task()->set_loss(v1::LOSS_KIND_CROSS_ENTROPY);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: task.loss must be LOSS_KIND_MSE, LOSS_KIND_L1 "
            "or LOSS_KIND_MODEL for TASK_KIND_REGRESSION (got "
            "LOSS_KIND_CROSS_ENTROPY)");

  spec = ValidSpec();
  spec.mutable_task()->set_loss(v1::LOSS_KIND_MSE);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: task.loss must be LOSS_KIND_CROSS_ENTROPY or "
            "LOSS_KIND_MODEL for TASK_KIND_CLASSIFICATION (got LOSS_KIND_MSE)");

  spec = ValidSpec();
  spec.mutable_export_()->set_torchscript_path("/out/m");
  spec.mutable_export_()->set_safetensors_path("/out/m");
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: export.safetensors_path must differ from "
            "export.torchscript_path (got \"/out/m\")");
}

TEST(JobSpecValidatorTest, LongValuesAreCutInMessages) {
  v1::JobSpec spec = ValidSpec();
  spec.set_name(std::string(10000, 'X'));
  const absl::Status s = ValidateJobSpec(spec);
  EXPECT_LT(s.message().size(), 200u);
  EXPECT_TRUE(absl::StrContains(s.message(), "...\")")) << s;
}

TEST(JobSpecValidatorTest, FirstErrorInFieldOrderWins) {
  v1::JobSpec spec = ValidSpec();
  spec.set_epochs(0);
  spec.mutable_optimizer()->set_learning_rate(0);
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()),
              StartsWith("invalid job spec: optimizer.learning_rate "));
}

TEST(JobSpecValidatorTest, WithDefaultsFillsZeroValues) {
  const v1::JobSpec d = WithDefaults(ValidSpec());
  EXPECT_EQ(d.progress_every_steps(), 10);
  EXPECT_EQ(d.progress_min_interval_ms(), 100);
  EXPECT_EQ(d.rendezvous_last_call_ms(), 1000);
  EXPECT_EQ(d.rendezvous_timeout_ms(), 600000);
  EXPECT_EQ(d.gradient_accumulation_steps(), 1);
  EXPECT_EQ(d.device(), v1::DEVICE_KIND_CPU);
  EXPECT_EQ(d.task().kind(), v1::TASK_KIND_CLASSIFICATION);
  EXPECT_EQ(d.task().loss(), v1::LOSS_KIND_UNSPECIFIED);  // The task's own.
  EXPECT_THAT(d.model().hidden_sizes(), ElementsAre(256, 128));
  EXPECT_TRUE(ValidateJobSpec(d).ok());
}

TEST(JobSpecValidatorTest, WithDefaultsKeepsSetValuesAndIsIdempotent) {
  v1::JobSpec spec = ValidSpec();
  spec.set_progress_every_steps(3);
  spec.set_progress_min_interval_ms(9);
  spec.set_rendezvous_last_call_ms(5);
  spec.set_rendezvous_timeout_ms(7);
  spec.set_gradient_accumulation_steps(4);
  spec.set_device(v1::DEVICE_KIND_CUDA);
  spec.mutable_model()->add_hidden_sizes(32);
  spec.mutable_task()->set_kind(v1::TASK_KIND_CLASSIFICATION);
  const v1::JobSpec d = WithDefaults(spec);
  EXPECT_EQ(d.SerializeAsString(), spec.SerializeAsString());
  const v1::JobSpec once = WithDefaults(ValidSpec());
  EXPECT_EQ(WithDefaults(once).SerializeAsString(), once.SerializeAsString());
}

TEST(JobSpecValidatorTest, WithDefaultsAddsHiddenSizesOnlyForMlp) {
  v1::JobSpec spec = ValidSpec();
  spec.mutable_model()->set_arch(v1::MODEL_ARCH_CNN);
  const v1::JobSpec d = WithDefaults(spec);
  EXPECT_EQ(d.model().hidden_sizes_size(), 0);
  EXPECT_TRUE(ValidateJobSpec(d).ok());
}

}  // namespace
}  // namespace ringleader
