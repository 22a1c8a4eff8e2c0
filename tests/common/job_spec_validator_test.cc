#include "common/job_spec_validator.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::MatchesRegex;
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

std::vector<std::string> Lines(const absl::Status& s) {
  return absl::StrSplit(s.message(), '\n');
}

// The field each line names ("invalid job spec: <field> ...").
std::vector<std::string> Fields(const absl::Status& s) {
  std::vector<std::string> fields;
  for (const std::string& line : Lines(s)) {
    std::vector<std::string> words = absl::StrSplit(line, ' ');
    fields.push_back(words.size() > 3 ? words[3] : line);
  }
  return fields;
}

struct Case {
  const char* what;
  std::function<v1::JobSpec()> make;
  // Proto path the message must name right after the prefix; empty: valid.
  std::string field;
  // The field of a second line, where the one edit breaks a second,
  // independent rule; empty: the message is one line.
  std::string also = "";
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

// A nanoGPT-style recipe: AdamW with betas, no decay on biases and norms,
// cosine with warmup to a floor, clipping.
v1::JobSpec Recipe() {
  v1::JobSpec spec = ValidSpec();
  v1::OptimizerSpec* o = spec.mutable_optimizer();
  o->set_kind(v1::OPTIMIZER_KIND_ADAMW);
  o->set_momentum(0);
  o->set_learning_rate(6e-4);
  o->set_beta1(0.9);
  o->set_beta2(0.95);
  o->set_eps(1e-8);
  o->set_weight_decay(0.1);
  o->set_no_decay_bias_and_norm(true);
  v1::LrSchedule* l = spec.mutable_lr_schedule();
  l->set_kind(v1::LR_SCHEDULE_KIND_COSINE);
  l->set_warmup_steps(100);
  l->set_min_lr(6e-5);
  l->set_decay_steps(5000);
  spec.set_clip_grad_norm(1.0);
  return spec;
}

v1::JobSpec StepSchedule() {
  v1::JobSpec spec = ValidSpec();
  spec.mutable_lr_schedule()->set_kind(v1::LR_SCHEDULE_KIND_STEP);
  spec.mutable_lr_schedule()->set_step_size(30);
  return spec;
}

// Optimizer fields 5..9, lr_schedule and clip_grad_norm.
std::vector<Case> RecipeCases() {
  using S = v1::JobSpec&;
  auto opt = [](S s) { return s.mutable_optimizer(); };
  auto lr = [](S s) { return s.mutable_lr_schedule(); };
  return {
      {"valid recipe", Recipe, ""},
      {"valid step schedule", StepSchedule, ""},
      {"valid adam betas zero",
       With(Recipe,
            [opt](S s) {
              opt(s)->set_kind(v1::OPTIMIZER_KIND_ADAM);
              opt(s)->set_beta1(0);
              opt(s)->set_beta2(0);
            }),
       ""},
      {"valid nesterov", With([opt](S s) { opt(s)->set_nesterov(true); }), ""},
      {"valid linear no horizon", With([lr](S s) {
         lr(s)->set_kind(v1::LR_SCHEDULE_KIND_LINEAR);
         lr(s)->set_warmup_steps(1000000);
       }),
       ""},
      {"valid constant warmup", With([lr](S s) {
         lr(s)->set_kind(v1::LR_SCHEDULE_KIND_CONSTANT);
         lr(s)->set_warmup_steps(10);
       }),
       ""},
      {"valid min lr equal to lr",
       With(Recipe, [lr](S s) { lr(s)->set_min_lr(6e-4); }), ""},
      // optimizer.beta1, beta2, eps
      {"beta1 with sgd", With([opt](S s) { opt(s)->set_beta1(0.9); }),
       "optimizer.beta1"},
      {"beta1 one", With(Recipe, [opt](S s) { opt(s)->set_beta1(1); }),
       "optimizer.beta1"},
      {"beta1 negative", With(Recipe, [opt](S s) { opt(s)->set_beta1(-0.1); }),
       "optimizer.beta1"},
      {"beta2 nan", With(Recipe, [opt](S s) { opt(s)->set_beta2(kNaN); }),
       "optimizer.beta2"},
      {"eps zero", With(Recipe, [opt](S s) { opt(s)->set_eps(0); }),
       "optimizer.eps"},
      {"eps negative", With(Recipe, [opt](S s) { opt(s)->set_eps(-1e-8); }),
       "optimizer.eps"},
      {"eps inf", With(Recipe, [opt](S s) { opt(s)->set_eps(kInf); }),
       "optimizer.eps"},
      {"eps with sgd", With([opt](S s) { opt(s)->set_eps(1e-8); }),
       "optimizer.eps"},
      // optimizer.nesterov, no_decay_bias_and_norm
      {"nesterov with adamw",
       With(Recipe, [opt](S s) { opt(s)->set_nesterov(true); }),
       "optimizer.nesterov"},
      {"nesterov without momentum", With([opt](S s) {
         opt(s)->set_momentum(0);
         opt(s)->set_nesterov(true);
       }),
       "optimizer.nesterov"},
      {"no decay group without decay",
       With(Recipe, [opt](S s) { opt(s)->set_weight_decay(0); }),
       "optimizer.no_decay_bias_and_norm"},
      {"momentum with adamw",
       With(Recipe, [opt](S s) { opt(s)->set_momentum(0.9); }),
       "optimizer.momentum"},
      // lr_schedule
      {"schedule kind unknown",
       With([lr](S s) { lr(s)->set_kind(static_cast<v1::LrScheduleKind>(9)); }),
       "lr_schedule.kind"},
      {"warmup negative",
       With(Recipe, [lr](S s) { lr(s)->set_warmup_steps(-1); }),
       "lr_schedule.warmup_steps"},
      {"warmup too long",
       With(Recipe, [lr](S s) { lr(s)->set_warmup_steps(1000000001); }),
       "lr_schedule.warmup_steps"},
      {"min lr above lr", With(Recipe, [lr](S s) { lr(s)->set_min_lr(1e-3); }),
       "lr_schedule.min_lr"},
      {"min lr negative", With(Recipe, [lr](S s) { lr(s)->set_min_lr(-1e-5); }),
       "lr_schedule.min_lr"},
      {"min lr nan", With(Recipe, [lr](S s) { lr(s)->set_min_lr(kNaN); }),
       "lr_schedule.min_lr"},
      {"min lr with constant", With([lr](S s) { lr(s)->set_min_lr(0.01); }),
       "lr_schedule.min_lr"},
      {"decay steps with step schedule",
       With(StepSchedule, [lr](S s) { lr(s)->set_decay_steps(100); }),
       "lr_schedule.decay_steps"},
      {"decay steps negative",
       With(Recipe, [lr](S s) { lr(s)->set_decay_steps(-5); }),
       "lr_schedule.decay_steps"},
      {"warmup past the horizon",
       With(Recipe, [lr](S s) { lr(s)->set_warmup_steps(5000); }),
       "lr_schedule.decay_steps"},
      {"step without step size",
       With(StepSchedule, [lr](S s) { lr(s)->set_step_size(0); }),
       "lr_schedule.step_size"},
      {"step size with cosine",
       With(Recipe, [lr](S s) { lr(s)->set_step_size(10); }),
       "lr_schedule.step_size"},
      {"gamma with cosine", With(Recipe, [lr](S s) { lr(s)->set_gamma(0.5); }),
       "lr_schedule.gamma"},
      {"gamma one", With(StepSchedule, [lr](S s) { lr(s)->set_gamma(1); }),
       "lr_schedule.gamma"},
      {"gamma negative",
       With(StepSchedule, [lr](S s) { lr(s)->set_gamma(-0.5); }),
       "lr_schedule.gamma"},
      {"gamma half", With(StepSchedule, [lr](S s) { lr(s)->set_gamma(0.5); }),
       ""},
      // clip_grad_norm
      {"clip negative", With([](S s) { s.set_clip_grad_norm(-1); }),
       "clip_grad_norm"},
      {"clip nan", With([](S s) { s.set_clip_grad_norm(kNaN); }),
       "clip_grad_norm"},
      {"clip inf", With([](S s) { s.set_clip_grad_norm(kInf); }),
       "clip_grad_norm"},
      {"clip small", With([](S s) { s.set_clip_grad_norm(1e-6); }), ""},
  };
}

// An ImageFolder job with a TorchScript model (the image formats' rule).
v1::JobSpec ImageFolderSpec() {
  v1::JobSpec spec = ValidSpec();
  spec.mutable_model()->set_arch(v1::MODEL_ARCH_TORCHSCRIPT);
  spec.mutable_model()->set_torchscript_path("/models/resnet.pt");
  v1::DatasetSpec* d = spec.mutable_dataset();
  d->clear_path();
  d->set_format(v1::DATASET_FORMAT_IMAGE_FOLDER);
  d->set_train_root("/data/train");
  d->set_test_root("/data/val");
  return spec;
}

v1::JobSpec ShardSpec() {
  v1::JobSpec spec = ImageFolderSpec();
  v1::DatasetSpec* d = spec.mutable_dataset();
  d->clear_train_root();
  d->clear_test_root();
  d->set_format(v1::DATASET_FORMAT_TAR_SHARDS);
  d->add_train_shards("/data/train-{000000..000099}.tar");
  d->add_test_shards("/data/val-000000.tar");
  return spec;
}

std::vector<Case> ImageCases() {
  using S = v1::JobSpec&;
  auto d = [](S s) { return s.mutable_dataset(); };
  return {
      {"image folder", ImageFolderSpec, ""},
      {"tar shards", ShardSpec, ""},
      {"image folder recipe",
       With(ImageFolderSpec,
            [d](S s) {
              d(s)->mutable_image()->set_size(160);
              d(s)->mutable_image()->set_resize_size(176);
              d(s)->mutable_image()->set_min_scale(0.35);
              d(s)->mutable_transform()->add_mean(0.485);
              d(s)->mutable_transform()->add_mean(0.456);
              d(s)->mutable_transform()->add_mean(0.406);
              for (double v : {0.229, 0.224, 0.225})
                d(s)->mutable_transform()->add_std(v);
              d(s)->mutable_augmentation()->set_horizontal_flip(true);
              d(s)->set_skip_corrupt(true);
              d(s)->set_loader_threads(4);
              d(s)->set_prefetch_batches(8);
            }),
       ""},
      {"image folder without root",
       With(ImageFolderSpec, [d](S s) { d(s)->clear_train_root(); }),
       "dataset.train_root"},
      {"image folder relative test root",
       With(ImageFolderSpec, [d](S s) { d(s)->set_test_root("val"); }),
       "dataset.test_root"},
      {"image folder with shards",
       With(ImageFolderSpec, [d](S s) { d(s)->add_train_shards("/x.tar"); }),
       "dataset.train_shards"},
      {"shards without any",
       With(ShardSpec, [d](S s) { d(s)->clear_train_shards(); }),
       "dataset.train_shards"},
      {"shards bad pattern",
       With(ShardSpec,
            [d](S s) { d(s)->set_train_shards(0, "/d/t-{9..1}.tar"); }),
       "dataset.train_shards[0]"},
      {"image size too big",
       With(ImageFolderSpec,
            [d](S s) { d(s)->mutable_image()->set_size(5000); }),
       "dataset.image.size"},
      {"resize below size",
       With(ImageFolderSpec,
            [d](S s) { d(s)->mutable_image()->set_resize_size(100); }),
       "dataset.image.resize_size"},
      {"scale above 1",
       With(ImageFolderSpec,
            [d](S s) { d(s)->mutable_image()->set_max_scale(1.5); }),
       "dataset.image.min_scale/max_scale"},
      {"ratio reversed",
       With(ImageFolderSpec,
            [d](S s) {
              d(s)->mutable_image()->set_min_ratio(2);
              d(s)->mutable_image()->set_max_ratio(1);
            }),
       "dataset.image.min_ratio/max_ratio"},
      {"image mean of one channel",
       With(ImageFolderSpec,
            [d](S s) {
              d(s)->mutable_transform()->add_mean(0.5);
              d(s)->mutable_transform()->add_std(0.5);
            }),
       "dataset.transform.mean"},
      {"image crop padding",
       With(ImageFolderSpec,
            [d](S s) {
              d(s)->mutable_augmentation()->set_random_crop_padding(4);
            }),
       "dataset.augmentation.random_crop_padding"},
      {"image with built-in model",
       With(ImageFolderSpec,
            [](S s) {
              s.mutable_model()->set_arch(v1::MODEL_ARCH_CNN);
              s.mutable_model()->clear_torchscript_path();
            }),
       "model.arch"},
      {"skip corrupt with idx",
       With([d](S s) { d(s)->set_skip_corrupt(true); }),
       "dataset.skip_corrupt"},
      {"image spec with npy-less idx",
       With([d](S s) { d(s)->mutable_image()->set_size(32); }),
       "dataset.image"},
      {"loader threads too many",
       With([d](S s) { d(s)->set_loader_threads(257); }),
       "dataset.loader_threads"},
      {"prefetch negative", With([d](S s) { d(s)->set_prefetch_batches(-1); }),
       "dataset.prefetch_batches"},
  };
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
            [](S s) { s.mutable_model()->set_torchscript_path("/m/net.pth"); }),
       ""},
      {"torchscript relative",
       With(TorchScript,
            [](S s) { s.mutable_model()->set_torchscript_path("net.pth"); }),
       "model.torchscript_path"},
      {"torchscript dotdot",
       With(TorchScript,
            [](S s) { s.mutable_model()->set_torchscript_path("/m/../n.pt"); }),
       "model.torchscript_path"},
      {"torchscript path at the limit",
       With(TorchScript,
            [](S s) {
              s.mutable_model()->set_torchscript_path(
                  "/" + std::string(4092, 'm') + ".pt");
            }),
       ""},
      {"torchscript path one past the limit",
       With(TorchScript,
            [](S s) {
              s.mutable_model()->set_torchscript_path(
                  "/" + std::string(4093, 'm') + ".pt");
            }),
       "model.torchscript_path"},
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
       "dataset.train.inputs[1]",
       // The train split now names one file more than the test split.
       "dataset.test.inputs"},
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
      {"tokens augmented",
       With(Tokens,
            [](S s) {
              s.mutable_dataset()->mutable_augmentation()->set_horizontal_flip(
                  true);
            }),
       "dataset.augmentation"},
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
       // A CNN cannot be a language model either.
       "model.arch", "task.kind"},
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
      {"idx path relative",
       With([](S s) { s.mutable_dataset()->set_path("data/mnist"); }),
       "dataset.path"},
      {"idx path with empty component",
       With([](S s) { s.mutable_dataset()->set_path("/data//mnist"); }),
       "dataset.path"},
      {"idx path may be read under /etc",
       With([](S s) { s.mutable_dataset()->set_path("/etc/datasets/mnist"); }),
       ""},
      {"idx path at the limit", With([](S s) {
         s.mutable_dataset()->set_path("/" + std::string(4095, 'd'));
       }),
       ""},
      {"npy input relative",
       With(Npy,
            [](S s) {
              s.mutable_dataset()->mutable_train()->set_inputs(0, "x.npy");
            }),
       "dataset.train.inputs[0]"},
      {"npy targets dotdot",
       With(Npy,
            [](S s) {
              s.mutable_dataset()->mutable_test()->set_targets("/d/../y.npy");
            }),
       "dataset.test.targets"},
      {"tokens relative",
       With(Tokens,
            [](S s) { s.mutable_dataset()->set_train_tokens("./t.bin"); }),
       "dataset.train_tokens"},
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
         s.mutable_optimizer()->set_kind(static_cast<v1::OptimizerKind>(99));
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
       With([](S s) { s.set_checkpoint_dir("/a..b/c.../"); }), ""},
      {"checkpoint dir dot", With([](S s) { s.set_checkpoint_dir("/a/./b"); }),
       "checkpoint_dir"},
      {"checkpoint dir empty component",
       With([](S s) { s.set_checkpoint_dir("/a//b"); }), "checkpoint_dir"},
      {"checkpoint dir at the limit",
       With([](S s) { s.set_checkpoint_dir("/" + std::string(4095, 'c')); }),
       ""},
      {"checkpoint dir one past the limit",
       With([](S s) { s.set_checkpoint_dir("/" + std::string(4096, 'c')); }),
       "checkpoint_dir"},
      {"checkpoint dir root", With([](S s) { s.set_checkpoint_dir("/"); }),
       "checkpoint_dir"},
      {"checkpoint dir proc", With([](S s) { s.set_checkpoint_dir("/proc"); }),
       "checkpoint_dir"},
      {"checkpoint dir under sys",
       With([](S s) { s.set_checkpoint_dir("/sys/fs/x/"); }), "checkpoint_dir"},
      {"checkpoint dir under dev",
       With([](S s) { s.set_checkpoint_dir("/dev/shm/ckpt"); }),
       "checkpoint_dir"},
      {"checkpoint dir under etc",
       With([](S s) { s.set_checkpoint_dir("/etc/ringleader"); }),
       "checkpoint_dir"},
      {"checkpoint dir names that only start like system ones",
       With([](S s) { s.set_checkpoint_dir("/procs/etc/dev"); }), ""},
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
      {"buckets in flight negative",
       With([](S s) { s.mutable_ddp()->set_buckets_in_flight(-1); }),
       "ddp.buckets_in_flight"},
      {"buckets in flight too many",
       With([](S s) { s.mutable_ddp()->set_buckets_in_flight(9); }),
       "ddp.buckets_in_flight"},
      {"buckets in flight default",
       With([](S s) { s.mutable_ddp()->set_buckets_in_flight(0); }), ""},
      {"buckets in flight max",
       With([](S s) { s.mutable_ddp()->set_buckets_in_flight(8); }), ""},
      {"cpu transport unknown", With([](S s) {
         s.mutable_ddp()->set_cpu_transport(static_cast<v1::CpuTransport>(9));
       }),
       "ddp.cpu_transport"},
      {"cpu transport shm", With([](S s) {
         s.mutable_ddp()->set_cpu_transport(v1::CPU_TRANSPORT_SHM);
       }),
       ""},
      // dataset.augmentation
      {"augmentation crop and flip", With([](S s) {
         s.mutable_dataset()->mutable_augmentation()->set_random_crop_padding(
             4);
         s.mutable_dataset()->mutable_augmentation()->set_horizontal_flip(true);
       }),
       ""},
      {"augmentation padding negative", With([](S s) {
         s.mutable_dataset()->mutable_augmentation()->set_random_crop_padding(
             -1);
       }),
       "dataset.augmentation.random_crop_padding"},
      {"augmentation padding too big", With([](S s) {
         s.mutable_dataset()->mutable_augmentation()->set_random_crop_padding(
             65);
       }),
       "dataset.augmentation.random_crop_padding"},
      // precision
      {"precision bf16",
       With([](S s) { s.set_precision(v1::PRECISION_BF16_MIXED); }), ""},
      {"precision unknown",
       With([](S s) { s.set_precision(static_cast<v1::Precision>(7)); }),
       "precision"},
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
      {"timeline dir under dev",
       With([](S s) { s.set_timeline_dir("/dev/null"); }), "timeline_dir"},
      {"timeline dir root", With([](S s) { s.set_timeline_dir("//"); }),
       "timeline_dir"},
      {"timeline dir at the limit",
       With([](S s) { s.set_timeline_dir("/" + std::string(4095, 't')); }), ""},
      {"timeline dir one past the limit",
       With([](S s) { s.set_timeline_dir("/" + std::string(4096, 't')); }),
       "timeline_dir"},
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
      {"export under etc", With([](S s) {
         s.mutable_export_()->set_torchscript_path("/etc/cron.d/m.pt");
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
      {"tensorboard dir",
       With([](S s) { s.mutable_export_()->set_tensorboard_dir("/out/tb"); }),
       ""},
      {"tensorboard relative",
       With([](S s) { s.mutable_export_()->set_tensorboard_dir("tb"); }),
       "export.tensorboard_dir"},
      {"tensorboard under proc",
       With([](S s) { s.mutable_export_()->set_tensorboard_dir("/proc/x"); }),
       "export.tensorboard_dir"},
  };
  for (Case& r : RecipeCases()) c.push_back(std::move(r));
  for (Case& r : ImageCases()) c.push_back(std::move(r));
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
    // One line per broken rule: the field path comes right after the
    // prefix, followed by the rule. A rule that depends on the broken one
    // adds no line.
    const std::vector<std::string> lines = Lines(s);
    ASSERT_EQ(lines.size(), c.also.empty() ? 1u : 2u) << s;
    EXPECT_THAT(lines[0], StartsWith("invalid job spec: " + c.field + " "));
    if (!c.also.empty()) {
      EXPECT_THAT(lines[1], StartsWith("invalid job spec: " + c.also + " "));
    }
    for (const std::string& line : lines) {
      EXPECT_TRUE(absl::StrContains(line, "(got ")) << line;
    }
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
            "TorchScript model for token data (got MODEL_ARCH_MLP)\n"
            "invalid job spec: task.kind must be TASK_KIND_CLASSIFICATION "
            "with MODEL_ARCH_MLP: built-in models classify images; use a "
            "TorchScript model for other tasks (got "
            "TASK_KIND_LANGUAGE_MODEL)");

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

TEST(JobSpecValidatorTest, RecipeMessagesAreExact) {
  v1::JobSpec spec = Recipe();
  spec.mutable_lr_schedule()->set_warmup_steps(6000);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: lr_schedule.decay_steps must be > "
            "lr_schedule.warmup_steps (the warmup must end before the decay "
            "horizon) (got 5000 <= 6000)");

  spec = Recipe();
  spec.mutable_lr_schedule()->set_min_lr(0.01);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: lr_schedule.min_lr must be in [0, "
            "optimizer.learning_rate] (got 0.01 with learning_rate 0.0006)");

  spec = StepSchedule();
  spec.mutable_lr_schedule()->clear_step_size();
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: lr_schedule.step_size must be in [1, "
            "1000000000] (got 0)");

  spec = ValidSpec();
  spec.set_clip_grad_norm(-0.5);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: clip_grad_norm must be >= 0 and finite (0: no "
            "clipping) (got -0.5)");

  spec = Recipe();
  spec.mutable_optimizer()->set_beta2(1);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: optimizer.beta2 must be in [0, 1) (got 1)");

  spec = Recipe();
  spec.mutable_optimizer()->set_eps(0);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: optimizer.eps must be in (0, 1] (got 0)");

  spec = ValidSpec();
  spec.mutable_optimizer()->set_beta1(0.9);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: optimizer.beta1 is only valid with "
            "optimizer.kind OPTIMIZER_KIND_ADAM or OPTIMIZER_KIND_ADAMW (got "
            "0.9 with OPTIMIZER_KIND_SGD)");

  spec = ValidSpec();
  spec.mutable_optimizer()->set_momentum(0);
  spec.mutable_optimizer()->set_nesterov(true);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: optimizer.nesterov requires optimizer.momentum "
            "> 0 (got true with momentum 0)");

  spec = ValidSpec();
  spec.mutable_lr_schedule()->set_min_lr(0.01);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: lr_schedule.min_lr is only valid with a "
            "decaying lr_schedule.kind (STEP, COSINE or LINEAR) (got 0.01 "
            "with LR_SCHEDULE_KIND_UNSPECIFIED)");
}

TEST(JobSpecValidatorTest, WithDefaultsGivesTheStepScheduleTorchsGamma) {
  const v1::JobSpec d = WithDefaults(StepSchedule());
  EXPECT_DOUBLE_EQ(d.lr_schedule().gamma(), 0.1);
  EXPECT_TRUE(ValidateJobSpec(d).ok());
  EXPECT_EQ(WithDefaults(d).SerializeAsString(), d.SerializeAsString());
  // Other kinds get no gamma (it would be refused), nor a schedule at all.
  EXPECT_EQ(WithDefaults(Recipe()).lr_schedule().gamma(), 0);
  EXPECT_FALSE(WithDefaults(ValidSpec()).has_lr_schedule());
}

TEST(JobSpecValidatorTest, LongValuesAreCutInMessages) {
  v1::JobSpec spec = ValidSpec();
  spec.set_name(std::string(10000, 'X'));
  const absl::Status s = ValidateJobSpec(spec);
  EXPECT_LT(s.message().size(), 200u);
  EXPECT_TRUE(absl::StrContains(s.message(), "...\" (10000 bytes))")) << s;
}

TEST(JobSpecValidatorTest, LongBinaryValuesAreCutAfterEscaping) {
  v1::JobSpec spec = ValidSpec();
  spec.set_checkpoint_dir(std::string(1000, '\x01'));  // Not absolute.
  const absl::Status s = ValidateJobSpec(spec);
  ASSERT_EQ(Lines(s).size(), 1u) << s;
  EXPECT_LT(s.message().size(), 300u);
  EXPECT_TRUE(absl::StrContains(s.message(), "\\x01...\" (1000 bytes))")) << s;
}

TEST(JobSpecValidatorTest, EveryErrorIsListedInFieldOrder) {
  v1::JobSpec spec = ValidSpec();
  spec.set_epochs(0);
  spec.mutable_optimizer()->set_learning_rate(0);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "invalid job spec: optimizer.learning_rate must be > 0 and finite "
            "(got 0)\n"
            "invalid job spec: epochs must be in [1, 100000] (got 0)");
}

TEST(JobSpecValidatorTest, SeveralIndependentErrorsGetALineEach) {
  v1::JobSpec spec = Synthetic();
  spec.set_name("My_Job");
  spec.mutable_model()->add_hidden_sizes(0);
  spec.mutable_model()->add_hidden_sizes(64);
  spec.mutable_model()->add_hidden_sizes(-2);
  spec.mutable_dataset()->set_synthetic_test_size(-1);
  spec.mutable_optimizer()->set_learning_rate(-1);
  spec.mutable_optimizer()->set_weight_decay(2);
  spec.set_batch_size(0);
  spec.set_checkpoint_every_steps(-1);
  spec.set_timeline_dir("relative/dir");
  spec.mutable_task()->set_label_smoothing(1.5);
  spec.mutable_export_()->set_safetensors_path("/out/");
  const absl::Status s = ValidateJobSpec(spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      Fields(s),
      ElementsAre("name", "model.hidden_sizes[0]", "model.hidden_sizes[2]",
                  "dataset.synthetic_test_size", "optimizer.learning_rate",
                  "optimizer.weight_decay", "batch_size",
                  "checkpoint_every_steps", "timeline_dir",
                  "task.label_smoothing", "export.safetensors_path"))
      << s;
  EXPECT_THAT(Lines(s), Contains("invalid job spec: model.hidden_sizes[2] "
                                 "must be in [1, 65536] (got -2)"));
}

TEST(JobSpecValidatorTest, AnEmptySpecNamesEveryMissingField) {
  // `ringctl submit --epochs=-3` with no file.
  v1::JobSpec spec;
  spec.set_epochs(-3);
  const absl::Status s = ValidateJobSpec(WithDefaults(spec));
  EXPECT_THAT(Fields(s),
              ElementsAre("name", "model.arch", "dataset.format",
                          "optimizer.kind", "optimizer.learning_rate", "epochs",
                          "batch_size", "min_workers"))
      << s;
  EXPECT_THAT(Lines(s), Contains("invalid job spec: epochs must be in [1, "
                                 "100000] (got -3)"));
  // The verdict does not depend on the defaults.
  EXPECT_EQ(ValidateJobSpec(spec).message(), s.message());
}

TEST(JobSpecValidatorTest, ARuleOnAnInvalidFieldWaitsForIt) {
  // Momentum is only wrong for a known optimizer other than SGD.
  v1::JobSpec spec = ValidSpec();
  spec.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_UNSPECIFIED);
  EXPECT_THAT(Fields(ValidateJobSpec(spec)), ElementsAre("optimizer.kind"));
  // The model's and the task's rules about the model wait for model.arch.
  spec = ValidSpec();
  spec.mutable_model()->set_arch(static_cast<v1::ModelArch>(42));
  spec.mutable_task()->set_loss(v1::LOSS_KIND_MODEL);
  spec.mutable_task()->set_kind(v1::TASK_KIND_REGRESSION);
  EXPECT_THAT(Fields(ValidateJobSpec(spec)), ElementsAre("model.arch"));
  // max_workers is compared with a valid min_workers only.
  spec = ValidSpec();
  spec.set_min_workers(-1);
  spec.set_max_workers(-5);
  EXPECT_THAT(Fields(ValidateJobSpec(spec)), ElementsAre("min_workers"));
  // Which dataset fields belong depends on the format.
  spec = ValidSpec();
  spec.mutable_dataset()->set_format(v1::DATASET_FORMAT_UNSPECIFIED);
  spec.mutable_dataset()->set_block_size(-1);
  EXPECT_THAT(Fields(ValidateJobSpec(spec)), ElementsAre("dataset.format"));
}

TEST(JobSpecValidatorTest, AHopelessSpecStaysWithinTheMessageBudget) {
  // Every string long and binary, every list full of bad entries: the
  // message must still fit a gRPC status.
  v1::JobSpec spec = Npy();
  const std::string junk(5000, '\x01');
  spec.set_name(junk);
  for (int i = 0; i < 16; ++i) spec.mutable_model()->add_hidden_sizes(-i);
  v1::DatasetSpec* d = spec.mutable_dataset();
  d->mutable_train()->clear_inputs();
  for (int i = 0; i < 16; ++i) {
    d->mutable_train()->add_inputs(std::string(100, '\0'));
  }
  d->mutable_transform()->clear_mean();
  d->mutable_transform()->clear_std();
  for (int i = 0; i < 64; ++i) {
    d->mutable_transform()->add_mean(kNaN);
    d->mutable_transform()->add_std(-1);
  }
  spec.set_checkpoint_dir(junk);
  spec.set_timeline_dir(junk);
  const absl::Status s = ValidateJobSpec(spec);
  const std::vector<std::string> lines = Lines(s);
  EXPECT_LE(s.message().size(), 4096u + 100u);
  EXPECT_LE(lines.size(), 25u);
  EXPECT_THAT(lines.back(),
              MatchesRegex("invalid job spec: \\.\\.\\. and [0-9]+ more"));
  for (const std::string& line : lines) {
    EXPECT_THAT(line, StartsWith("invalid job spec: "));
    EXPECT_LT(line.size(), 400u) << line;
  }
}

// An NPY spec whose serialized size is exactly `bytes` (near 64 KiB): 32
// input paths of ~2 KB, and a checkpoint_dir that makes up the rest.
v1::JobSpec SpecOfSize(size_t bytes) {
  v1::JobSpec spec = Npy();
  v1::DatasetSpec* d = spec.mutable_dataset();
  for (v1::NpySplit* split : {d->mutable_train(), d->mutable_test()}) {
    split->clear_inputs();
    for (int i = 0; i < 16; ++i) {
      split->add_inputs(absl::StrCat("/d/", i, "/", std::string(1960, 'x')));
    }
  }
  spec.set_checkpoint_dir("/c/" + std::string(2000, 'c'));
  // Lengths from 128 to 16383 take a 2-byte varint: the size moves 1:1.
  const int64_t missing = static_cast<int64_t>(bytes) - spec.ByteSizeLong();
  spec.set_checkpoint_dir("/c/" + std::string(2000 + missing, 'c'));
  EXPECT_EQ(spec.ByteSizeLong(), bytes);
  return spec;
}

TEST(JobSpecValidatorTest, TheWholeSpecIsAtMost64KiB) {
  EXPECT_TRUE(ValidateJobSpec(SpecOfSize(64 << 10)).ok());
  const absl::Status s = ValidateJobSpec(SpecOfSize((64 << 10) + 1));
  EXPECT_THAT(Lines(s),
              ElementsAre("invalid job spec: JobSpec must be at most "
                          "65536 bytes serialized (got 65537 bytes)"));
}

TEST(JobSpecValidatorTest, AMegabytePathIsRefusedInAShortMessage) {
  // Issue 17: a 4 MB checkpoint_dir was accepted, and every heartbeat that
  // assigned the job then failed on the workers' message limit.
  v1::JobSpec spec = ValidSpec();
  spec.set_checkpoint_dir("/" + std::string(4 << 20, 'c'));
  const absl::Status s = ValidateJobSpec(spec);
  EXPECT_THAT(Fields(s), ElementsAre("JobSpec", "checkpoint_dir"));
  EXPECT_LT(s.message().size(), 1024u) << s;
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
