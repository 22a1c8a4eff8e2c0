#include "cli/spec_flags.h"

#include <fstream>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/spec_flag_table.h"
#include "cli/submit_spec.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"

namespace ringleader::cli {
namespace {

// Parses `args` as `ringctl submit` would and applies them to `base`.
v1::JobSpec Parse(const std::string& args, v1::JobSpec base = {}) {
  CLI::App app("test");
  SpecOverrides overrides;
  AddSpecFlags(&app, &overrides);
  app.parse(args, /*program_name_included=*/false);
  ApplySpecOverrides(overrides, &base);
  return base;
}

// The CLI11 error for `args`, or "" if they parse.
std::string ParseError(const std::string& args) {
  try {
    Parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

constexpr char kFullFlags[] =
    "--name=mnist --model=mlp --hidden=512,256,64 --dataset=synthetic "
    "--train_size=6000 --test_size=1000 --shuffle --drop_last "
    "--optimizer=sgd --lr=0.05 --momentum=0.9 --weight_decay=0.0001 "
    "--epochs=3 --batch_size=64 --min_workers=2 --max_workers=4 --seed=42 "
    "--checkpoint_dir=/ck --checkpoint_every=100 --progress_every=5 "
    "--progress_interval_ms=250 "
    "--max_restarts=3 --device=cuda --precision=bf16 --last_call_ms=250 "
    "--rendezvous_timeout_ms=9000 --resume --grad_accum=2 "
    "--bucket_cap_bytes=4096 --first_bucket_bytes=1024 "
    "--allreduce_after_backward --cpu_transport=shm "
    "--gradient_compression=bf16 --buckets_in_flight=3 "
    "--evaluate_every_epoch --checkpoint_synchronous "
    "--timeline_dir=/tl --timeline_steps=7 "
    "--train_inputs=/d/x.npy,/d/m.npy --train_targets=/d/y.npy "
    "--test_inputs=/d/tx.npy,/d/tm.npy --test_targets=/d/ty.npy "
    "--input_scale=0.5 --input_mean=0.1,0.2 --input_std=0.3,0.4 "
    "--train_tokens=/d/train.bin --test_tokens=/d/val.bin "
    "--token_dtype=uint32 --block_size=128 "
    "--task=regression --loss=l1 --ignore_index=-1 --label_smoothing=0.1 "
    "--top_k=3 --num_classes=10 --export_torchscript=/out/m.pt "
    "--export_safetensors=/out/m.safetensors "
    "--beta1=0.85 --beta2=0.98 --eps=1e-7 --nesterov --no_decay_bias_and_norm "
    "--lr_schedule=cosine --warmup_steps=50 --min_lr=0.001 --decay_steps=900 "
    "--lr_step_size=7 --lr_gamma=0.5 --clip_grad_norm=2.5";

TEST(SpecFlagsTest, EveryFlagSetsItsField) {
  const v1::JobSpec s = Parse(kFullFlags);
  EXPECT_EQ(s.name(), "mnist");
  EXPECT_EQ(s.model().arch(), v1::MODEL_ARCH_MLP);
  ASSERT_EQ(s.model().hidden_sizes_size(), 3);
  EXPECT_EQ(s.model().hidden_sizes(0), 512);
  EXPECT_EQ(s.model().hidden_sizes(2), 64);
  EXPECT_EQ(s.dataset().format(), v1::DATASET_FORMAT_SYNTHETIC);
  EXPECT_EQ(s.dataset().synthetic_train_size(), 6000);
  EXPECT_EQ(s.dataset().synthetic_test_size(), 1000);
  EXPECT_TRUE(s.dataset().shuffle());
  EXPECT_TRUE(s.dataset().drop_last());
  EXPECT_EQ(s.optimizer().kind(), v1::OPTIMIZER_KIND_SGD);
  EXPECT_DOUBLE_EQ(s.optimizer().learning_rate(), 0.05);
  EXPECT_DOUBLE_EQ(s.optimizer().momentum(), 0.9);
  EXPECT_DOUBLE_EQ(s.optimizer().weight_decay(), 0.0001);
  EXPECT_EQ(s.epochs(), 3);
  EXPECT_EQ(s.batch_size(), 64);
  EXPECT_EQ(s.min_workers(), 2);
  EXPECT_EQ(s.max_workers(), 4);
  EXPECT_EQ(s.seed(), 42u);
  EXPECT_EQ(s.checkpoint_dir(), "/ck");
  EXPECT_EQ(s.checkpoint_every_steps(), 100);
  EXPECT_EQ(s.progress_every_steps(), 5);
  EXPECT_EQ(s.progress_min_interval_ms(), 250);
  EXPECT_EQ(s.max_restarts(), 3);
  EXPECT_EQ(s.device(), v1::DEVICE_KIND_CUDA);
  EXPECT_EQ(s.rendezvous_last_call_ms(), 250);
  EXPECT_EQ(s.rendezvous_timeout_ms(), 9000);
  EXPECT_TRUE(s.resume());
  EXPECT_EQ(s.gradient_accumulation_steps(), 2);
  EXPECT_EQ(s.precision(), v1::PRECISION_BF16_MIXED);
  EXPECT_EQ(s.ddp().bucket_cap_bytes(), 4096);
  EXPECT_EQ(s.ddp().first_bucket_bytes(), 1024);
  EXPECT_TRUE(s.ddp().allreduce_after_backward());
  EXPECT_EQ(s.ddp().cpu_transport(), v1::CPU_TRANSPORT_SHM);
  EXPECT_EQ(s.ddp().gradient_compression(), v1::GRADIENT_COMPRESSION_BF16);
  EXPECT_EQ(s.ddp().buckets_in_flight(), 3);
  EXPECT_TRUE(s.evaluate_every_epoch());
  EXPECT_TRUE(s.checkpoint_synchronous());
  EXPECT_EQ(s.timeline_dir(), "/tl");
  EXPECT_EQ(s.timeline_steps(), 7);
  const v1::DatasetSpec& d = s.dataset();
  ASSERT_EQ(d.train().inputs_size(), 2);
  EXPECT_EQ(d.train().inputs(1), "/d/m.npy");
  EXPECT_EQ(d.train().targets(), "/d/y.npy");
  ASSERT_EQ(d.test().inputs_size(), 2);
  EXPECT_EQ(d.test().inputs(0), "/d/tx.npy");
  EXPECT_EQ(d.test().targets(), "/d/ty.npy");
  EXPECT_DOUBLE_EQ(d.transform().scale(), 0.5);
  ASSERT_EQ(d.transform().mean_size(), 2);
  EXPECT_DOUBLE_EQ(d.transform().mean(1), 0.2);
  ASSERT_EQ(d.transform().std_size(), 2);
  EXPECT_DOUBLE_EQ(d.transform().std(0), 0.3);
  EXPECT_EQ(d.train_tokens(), "/d/train.bin");
  EXPECT_EQ(d.test_tokens(), "/d/val.bin");
  EXPECT_EQ(d.token_dtype(), v1::TOKEN_DTYPE_UINT32);
  EXPECT_EQ(d.block_size(), 128);
  EXPECT_EQ(s.task().kind(), v1::TASK_KIND_REGRESSION);
  EXPECT_EQ(s.task().loss(), v1::LOSS_KIND_L1);
  ASSERT_TRUE(s.task().has_ignore_index());
  EXPECT_EQ(s.task().ignore_index(), -1);
  EXPECT_DOUBLE_EQ(s.task().label_smoothing(), 0.1);
  EXPECT_EQ(s.task().top_k(), 3);
  EXPECT_EQ(s.task().num_classes(), 10);
  EXPECT_EQ(s.export_().torchscript_path(), "/out/m.pt");
  EXPECT_EQ(s.export_().safetensors_path(), "/out/m.safetensors");
  const v1::OptimizerSpec& o = s.optimizer();
  ASSERT_TRUE(o.has_beta1());
  EXPECT_DOUBLE_EQ(o.beta1(), 0.85);
  EXPECT_DOUBLE_EQ(o.beta2(), 0.98);
  EXPECT_DOUBLE_EQ(o.eps(), 1e-7);
  EXPECT_TRUE(o.nesterov());
  EXPECT_TRUE(o.no_decay_bias_and_norm());
  const v1::LrSchedule& l = s.lr_schedule();
  EXPECT_EQ(l.kind(), v1::LR_SCHEDULE_KIND_COSINE);
  EXPECT_EQ(l.warmup_steps(), 50);
  EXPECT_DOUBLE_EQ(l.min_lr(), 0.001);
  EXPECT_EQ(l.decay_steps(), 900);
  EXPECT_EQ(l.step_size(), 7);
  EXPECT_DOUBLE_EQ(l.gamma(), 0.5);
  EXPECT_DOUBLE_EQ(s.clip_grad_norm(), 2.5);
}

TEST(SpecFlagsTest, AdamWAndTheScheduleKinds) {
  const v1::JobSpec s = Parse("--optimizer=AdamW --lr_schedule=STEP");
  EXPECT_EQ(s.optimizer().kind(), v1::OPTIMIZER_KIND_ADAMW);
  EXPECT_EQ(s.lr_schedule().kind(), v1::LR_SCHEDULE_KIND_STEP);
  EXPECT_FALSE(s.optimizer().has_beta1());  // Untouched: torch's default.
  EXPECT_EQ(Parse("--lr_schedule=linear").lr_schedule().kind(),
            v1::LR_SCHEDULE_KIND_LINEAR);
  EXPECT_EQ(Parse("--lr_schedule=constant").lr_schedule().kind(),
            v1::LR_SCHEDULE_KIND_CONSTANT);
  EXPECT_FALSE(Parse("--lr=0.1").has_lr_schedule());
  EXPECT_NE(ParseError("--lr_schedule=exponential"), "");
}

bool IsFileOnly(const std::string& path) {
  for (const FileOnlyField& f : FileOnlySpecFields()) {
    if (f.field == path) return true;
  }
  return false;
}

// Every JobSpec field (recursively) but those listed as file-only is set by
// some flag, so a new proto field without a flag fails here (and in
// spec_flag_table_test).
void ExpectEveryFieldHasAFlag(const google::protobuf::Descriptor* d,
                              const std::string& prefix) {
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    const std::string path = prefix + f->name();
    if (IsFileOnly(path)) continue;
    if (f->message_type() != nullptr) {
      ExpectEveryFieldHasAFlag(f->message_type(), path + ".");
    } else {
      EXPECT_NE(FlagForField(path), "") << path << " has no flag";
    }
  }
}

TEST(SpecFlagsTest, EveryJobSpecFieldHasAFlag) {
  ExpectEveryFieldHasAFlag(v1::JobSpec::descriptor(), "");
}

TEST(SpecFlagsTest, TheFullFlagSetTouchesEveryField) {
  const v1::JobSpec s = Parse(kFullFlags);
  std::vector<const google::protobuf::FieldDescriptor*> set;
  s.GetReflection()->ListFields(s, &set);
  EXPECT_EQ(static_cast<int>(set.size()),
            v1::JobSpec::descriptor()->field_count());
}

TEST(SpecFlagsTest, GradientCompressionNames) {
  EXPECT_EQ(Parse("--gradient_compression=fp16").ddp().gradient_compression(),
            v1::GRADIENT_COMPRESSION_FP16);
  EXPECT_EQ(Parse("--gradient_compression=none").ddp().gradient_compression(),
            v1::GRADIENT_COMPRESSION_NONE);
  EXPECT_EQ(FlagForField("ddp.gradient_compression"), "--gradient_compression");
  // Not given: the file's value stays.
  v1::JobSpec base;
  base.mutable_ddp()->set_gradient_compression(v1::GRADIENT_COMPRESSION_BF16);
  EXPECT_EQ(Parse("--epochs=1", base).ddp().gradient_compression(),
            v1::GRADIENT_COMPRESSION_BF16);
}

TEST(SpecFlagsTest, OtherModelsDatasetsAndOptimizers) {
  const v1::JobSpec s = Parse(
      "--model=TorchScript --torchscript_path=/m/net.pt --dataset=idx "
      "--data_path=/data --optimizer=adam --device=cpu");
  EXPECT_EQ(s.model().arch(), v1::MODEL_ARCH_TORCHSCRIPT);
  EXPECT_EQ(s.model().torchscript_path(), "/m/net.pt");
  EXPECT_EQ(s.dataset().format(), v1::DATASET_FORMAT_IDX);
  EXPECT_EQ(s.dataset().path(), "/data");
  EXPECT_EQ(s.optimizer().kind(), v1::OPTIMIZER_KIND_ADAM);
  EXPECT_EQ(s.device(), v1::DEVICE_KIND_CPU);
  EXPECT_EQ(Parse("--model=cnn").model().arch(), v1::MODEL_ARCH_CNN);
}

TEST(SpecFlagsTest, ImageFormatsAndTheLoader) {
  const v1::JobSpec s = Parse(
      "--dataset=image_folder --train_root=/d/train --test_root=/d/val "
      "--image_size=160 --resize_size=176 --min_scale=0.3 --max_scale=0.9 "
      "--min_ratio=0.5 --max_ratio=2 --no_random_crop --full_decode "
      "--skip_corrupt --loader_threads=6 --prefetch_batches=8");
  const v1::DatasetSpec& d = s.dataset();
  EXPECT_EQ(d.format(), v1::DATASET_FORMAT_IMAGE_FOLDER);
  EXPECT_EQ(d.train_root(), "/d/train");
  EXPECT_EQ(d.test_root(), "/d/val");
  EXPECT_EQ(d.image().size(), 160);
  EXPECT_EQ(d.image().resize_size(), 176);
  EXPECT_EQ(d.image().min_scale(), 0.3);
  EXPECT_EQ(d.image().max_scale(), 0.9);
  EXPECT_EQ(d.image().min_ratio(), 0.5);
  EXPECT_EQ(d.image().max_ratio(), 2);
  EXPECT_TRUE(d.image().no_random_crop());
  EXPECT_TRUE(d.image().full_decode());
  EXPECT_TRUE(d.skip_corrupt());
  EXPECT_EQ(d.loader_threads(), 6);
  EXPECT_EQ(d.prefetch_batches(), 8);
  const v1::JobSpec t = Parse(
      "--dataset=tar_shards --train_shards=/s/a-{0..9}.tar,/s/b.tar "
      "--test_shards=/s/t.tar");
  EXPECT_EQ(t.dataset().format(), v1::DATASET_FORMAT_TAR_SHARDS);
  ASSERT_EQ(t.dataset().train_shards_size(), 2);
  EXPECT_EQ(t.dataset().train_shards(0), "/s/a-{0..9}.tar");
  EXPECT_EQ(t.dataset().test_shards(0), "/s/t.tar");
}

TEST(SpecFlagsTest, FlagsNotGivenLeaveTheBaseAlone) {
  v1::JobSpec base;
  base.set_name("from-file");
  base.set_epochs(7);
  base.mutable_dataset()->set_shuffle(true);
  base.mutable_model()->add_hidden_sizes(32);
  const v1::JobSpec s = Parse("--epochs=2", base);
  EXPECT_EQ(s.name(), "from-file");
  EXPECT_EQ(s.epochs(), 2);
  EXPECT_TRUE(s.dataset().shuffle());
  ASSERT_EQ(s.model().hidden_sizes_size(), 1);
  EXPECT_EQ(Parse("", base).SerializeAsString(), base.SerializeAsString());
}

TEST(SpecFlagsTest, NoShuffleAndFalseFlagsOverrideTrue) {
  v1::JobSpec base;
  base.mutable_dataset()->set_shuffle(true);
  base.mutable_dataset()->set_drop_last(true);
  base.set_resume(true);
  const v1::JobSpec s =
      Parse("--no-shuffle --drop_last=false --resume=false", base);
  EXPECT_FALSE(s.dataset().shuffle());
  EXPECT_FALSE(s.dataset().drop_last());
  EXPECT_FALSE(s.resume());
}

TEST(SpecFlagsTest, TheLastOfRepeatedFlagsWins) {
  const v1::JobSpec s = Parse(
      "--lr=0.1 --lr=0.2 --model=cnn --model=mlp --no-shuffle --shuffle "
      "--workers=2 --workers=3");
  EXPECT_DOUBLE_EQ(s.optimizer().learning_rate(), 0.2);
  EXPECT_EQ(s.model().arch(), v1::MODEL_ARCH_MLP);
  EXPECT_TRUE(s.dataset().shuffle());
  EXPECT_EQ(s.max_workers(), 3);
  EXPECT_FALSE(Parse("--shuffle --no-shuffle").dataset().shuffle());
}

TEST(SpecFlagsTest, PrecisionIsSpelledBf16) {
  EXPECT_EQ(Parse("--precision=BF16").precision(), v1::PRECISION_BF16_MIXED);
  EXPECT_EQ(Parse("--precision=fp32").precision(), v1::PRECISION_FP32);
  EXPECT_NE(ParseError("--precision=bf16_mixed"), "");
  EXPECT_NE(ParseError("--precision=unspecified"), "");
}

TEST(SpecFlagsTest, AFlagGivenTwiceIsOneOverride) {
  CLI::App app("test");
  SpecOverrides overrides;
  AddSpecFlags(&app, &overrides);
  app.parse("--lr=1 --lr=2 --workers=3", /*program_name_included=*/false);
  std::vector<std::string> given;
  for (const FieldPath& path : overrides.given) {
    given.push_back(FieldPathName(path));
  }
  EXPECT_EQ(given, (std::vector<std::string>{"optimizer.learning_rate",
                                             "min_workers", "max_workers"}));
}

TEST(SpecFlagsTest, AListFlagGivenTwiceTakesBoth) {
  const v1::JobSpec s = Parse("--hidden=1,2 --hidden=3");
  ASSERT_EQ(s.model().hidden_sizes_size(), 3);
  EXPECT_EQ(s.model().hidden_sizes(2), 3);
}

TEST(SpecFlagsTest, HiddenReplacesTheList) {
  v1::JobSpec base;
  base.mutable_model()->add_hidden_sizes(1);
  base.mutable_model()->add_hidden_sizes(2);
  const v1::JobSpec s = Parse("--hidden=8", base);
  ASSERT_EQ(s.model().hidden_sizes_size(), 1);
  EXPECT_EQ(s.model().hidden_sizes(0), 8);
}

TEST(SpecFlagsTest, WorkersSetsBothBounds) {
  const v1::JobSpec s = Parse("--workers=3");
  EXPECT_EQ(s.min_workers(), 3);
  EXPECT_EQ(s.max_workers(), 3);
  EXPECT_NE(ParseError("--workers=3 --min_workers=1"), "");
}

TEST(SpecFlagsTest, IntegersAreDecimal) {
  EXPECT_EQ(Parse("--epochs=010").epochs(), 10);
  EXPECT_EQ(Parse("--epochs=0").epochs(), 0);
  EXPECT_EQ(Parse("--hidden=0064,8").model().hidden_sizes(0), 64);
  EXPECT_EQ(Parse("--last_call_ms=-5").rendezvous_last_call_ms(), -5);
  EXPECT_EQ(Parse("--seed=18446744073709551615").seed(), UINT64_MAX);
  EXPECT_NE(ParseError("--epochs=0x10"), "");
  EXPECT_NE(ParseError("--epochs=abc"), "");
  EXPECT_NE(ParseError("--epochs=1.5"), "");
  EXPECT_NE(ParseError("--seed=-1"), "");
  EXPECT_NE(ParseError("--hidden=8,x"), "");
}

TEST(SpecFlagsTest, OutOfRangeAndUnknownValuesAreParseErrors) {
  EXPECT_NE(ParseError("--epochs=99999999999"), "");
  EXPECT_NE(ParseError("--model=resnet"), "");
  EXPECT_NE(ParseError("--optimizer=rmsprop"), "");
  EXPECT_NE(ParseError("--gradient_compression=int8"), "");
  EXPECT_NE(ParseError("--lr=fast"), "");
  EXPECT_NE(ParseError("--frobnicate=1"), "");
}

TEST(SpecFlagsTest, NpyListsReplaceTheFilesLists) {
  v1::JobSpec base;
  base.mutable_dataset()->mutable_train()->add_inputs("/old/a.npy");
  base.mutable_dataset()->mutable_train()->add_inputs("/old/b.npy");
  base.mutable_dataset()->mutable_transform()->add_mean(9);
  const v1::JobSpec s =
      Parse("--train_inputs=/new/x.npy --input_mean=1,2,3", base);
  ASSERT_EQ(s.dataset().train().inputs_size(), 1);
  EXPECT_EQ(s.dataset().train().inputs(0), "/new/x.npy");
  ASSERT_EQ(s.dataset().transform().mean_size(), 3);
  EXPECT_DOUBLE_EQ(s.dataset().transform().mean(2), 3);
  // No dataset or task flag: no empty messages appear.
  const v1::JobSpec plain = Parse("--epochs=1");
  EXPECT_FALSE(plain.has_dataset());
  EXPECT_FALSE(plain.has_task());
  EXPECT_FALSE(plain.has_export_());
  EXPECT_NE(ParseError("--task=vision"), "");
  EXPECT_NE(ParseError("--loss=hinge"), "");
  EXPECT_NE(ParseError("--token_dtype=int8"), "");
  EXPECT_NE(ParseError("--input_mean=0.5,x"), "");
  EXPECT_NE(ParseError("--ignore_index=0x1"), "");
}

TEST(FlagForFieldTest, MapsValidatorFieldPathsToFlags) {
  EXPECT_EQ(FlagForField("dataset.train.inputs[3]"), "--train_inputs");
  EXPECT_EQ(FlagForField("dataset.transform.std[0]"), "--input_std");
  EXPECT_EQ(FlagForField("dataset.test"), "--test_inputs");
  EXPECT_EQ(FlagForField("task.loss"), "--loss");
  EXPECT_EQ(FlagForField("export.safetensors_path"), "--export_safetensors");
  EXPECT_EQ(FlagForField("optimizer.learning_rate"), "--lr");
  EXPECT_EQ(FlagForField("model.hidden_sizes[2]"), "--hidden");
  EXPECT_EQ(FlagForField("gradient_accumulation_steps"), "--grad_accum");
  EXPECT_EQ(FlagForField("rendezvous_last_call_ms"), "--last_call_ms");
  EXPECT_EQ(FlagForField("lr_schedule.step_size"), "--lr_step_size");
  EXPECT_EQ(FlagForField("lr_schedule.decay_steps"), "--decay_steps");
  EXPECT_EQ(FlagForField("optimizer.no_decay_bias_and_norm"),
            "--no_decay_bias_and_norm");
  EXPECT_EQ(FlagForField("clip_grad_norm"), "--clip_grad_norm");
  EXPECT_EQ(FlagForField("no.such.field"), "");
}

TEST(WithFlagHintTest, AppendsTheFlag) {
  EXPECT_EQ(WithFlagHint("invalid job spec: epochs must be in [1, 100000] "
                         "(got 0)"),
            "invalid job spec: epochs must be in [1, 100000] (got 0) "
            "(flag --epochs)");
  EXPECT_EQ(WithFlagHint("something else"), "something else");
}

TEST(WithFlagHintTest, HintsEveryLine) {
  EXPECT_EQ(WithFlagHint("invalid job spec: name must match x (got \"\")\n"
                         "invalid job spec: ... and 3 more\n"
                         "invalid job spec: epochs must be in [1, 9] (got 0)"),
            "invalid job spec: name must match x (got \"\") (flag --name)\n"
            "invalid job spec: ... and 3 more\n"
            "invalid job spec: epochs must be in [1, 9] (got 0) (flag "
            "--epochs)");
}

// A spec the validator accepts.
constexpr char kValidFlags[] =
    "--name=ok --model=mlp --dataset=synthetic --train_size=100 "
    "--optimizer=sgd --lr=0.1 --epochs=1 --batch_size=8 --workers=1";

SpecOverrides Overrides(const std::string& args) {
  CLI::App app("test");
  SpecOverrides overrides;
  AddSpecFlags(&app, &overrides);
  app.parse(args, false);
  return overrides;
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path =
      std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(BuildSubmitSpecTest, FromFlagsWithDefaults) {
  absl::StatusOr<v1::JobSpec> s = BuildSubmitSpec("", Overrides(kValidFlags));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name(), "ok");
  EXPECT_EQ(s->progress_every_steps(), 10);  // From WithDefaults.
  EXPECT_EQ(s->device(), v1::DEVICE_KIND_CPU);
  EXPECT_EQ(s->model().hidden_sizes_size(), 2);
}

TEST(BuildSubmitSpecTest, LanguageModelFromFlags) {
  absl::StatusOr<v1::JobSpec> s = BuildSubmitSpec(
      "", Overrides("--name=lm --model=torchscript "
                    "--torchscript_path=/m/gpt.pt --dataset=tokens "
                    "--train_tokens=/d/train.bin --block_size=64 "
                    "--task=language_model --loss=model --optimizer=adam "
                    "--lr=0.001 --epochs=1 --batch_size=8 --workers=2 "
                    "--export_torchscript=/out/gpt.pt"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->task().kind(), v1::TASK_KIND_LANGUAGE_MODEL);
  EXPECT_EQ(s->dataset().block_size(), 64);
  EXPECT_EQ(s->export_().torchscript_path(), "/out/gpt.pt");
}

TEST(BuildSubmitSpecTest, ANewFieldsErrorNamesItsFlag) {
  absl::StatusOr<v1::JobSpec> s =
      BuildSubmitSpec("", Overrides(std::string(kValidFlags) + " --loss=mse"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "invalid job spec: task.loss must be LOSS_KIND_CROSS_ENTROPY or "
            "LOSS_KIND_MODEL for TASK_KIND_CLASSIFICATION (got LOSS_KIND_MSE) "
            "(flag --loss)");
}

TEST(BuildSubmitSpecTest, ARecipeErrorNamesItsFlag) {
  absl::StatusOr<v1::JobSpec> s =
      BuildSubmitSpec("", Overrides(std::string(kValidFlags) +
                                    " --lr_schedule=cosine --warmup_steps=100 "
                                    "--decay_steps=50"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "invalid job spec: lr_schedule.decay_steps must be > "
            "lr_schedule.warmup_steps (the warmup must end before the decay "
            "horizon) (got 50 <= 100) (flag --decay_steps)");
  s = BuildSubmitSpec(
      "", Overrides(std::string(kValidFlags) + " --clip_grad_norm=-1"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "invalid job spec: clip_grad_norm must be >= 0 and finite (0: no "
            "clipping) (got -1) (flag --clip_grad_norm)");
}

TEST(BuildSubmitSpecTest, InvalidSpecNamesFieldAndFlag) {
  absl::StatusOr<v1::JobSpec> s =
      BuildSubmitSpec("", Overrides(std::string(kValidFlags) + " --lr=-1"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "invalid job spec: optimizer.learning_rate must be > 0 and finite "
            "(got -1) (flag --lr)");
}

TEST(BuildSubmitSpecTest, EveryInvalidFieldGetsALineWithItsFlag) {
  // `ringctl submit --epochs=-3`: everything else is missing.
  absl::StatusOr<v1::JobSpec> s = BuildSubmitSpec("", Overrides("--epochs=-3"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      s.status().message(),
      "invalid job spec: name must match "
      "[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])? (got \"\") (flag --name)\n"
      "invalid job spec: model.arch must be one of MODEL_ARCH_MLP, "
      "MODEL_ARCH_CNN, MODEL_ARCH_TORCHSCRIPT (got "
      "MODEL_ARCH_UNSPECIFIED) (flag --model)\n"
      "invalid job spec: dataset.format must be one of "
      "DATASET_FORMAT_IDX, DATASET_FORMAT_SYNTHETIC, DATASET_FORMAT_NPY, "
      "DATASET_FORMAT_TOKENS, DATASET_FORMAT_IMAGE_FOLDER, "
      "DATASET_FORMAT_TAR_SHARDS (got DATASET_FORMAT_UNSPECIFIED) (flag "
      "--dataset)\n"
      "invalid job spec: optimizer.kind must be one of "
      "OPTIMIZER_KIND_SGD, OPTIMIZER_KIND_ADAM, OPTIMIZER_KIND_ADAMW (got "
      "OPTIMIZER_KIND_UNSPECIFIED) (flag --optimizer)\n"
      "invalid job spec: optimizer.learning_rate must be > 0 and finite "
      "(got 0) (flag --lr)\n"
      "invalid job spec: epochs must be in [1, 100000] (got -3) (flag "
      "--epochs)\n"
      "invalid job spec: batch_size must be in [1, 65536] (got 0) (flag "
      "--batch_size)\n"
      "invalid job spec: min_workers must be >= 1 (got 0) (flag "
      "--min_workers)");
}

TEST(BuildSubmitSpecTest, FlagsOverrideTheFile) {
  const std::string path = WriteFile("base.textproto", R"pb(
    name: "from-file"
    model { arch: MODEL_ARCH_CNN }
    dataset { format: DATASET_FORMAT_SYNTHETIC synthetic_train_size: 50 }
    optimizer { kind: OPTIMIZER_KIND_ADAM learning_rate: 0.001 }
    epochs: 4
    batch_size: 16
    min_workers: 1
    max_workers: 2
  )pb");
  absl::StatusOr<v1::JobSpec> s =
      BuildSubmitSpec(path, Overrides("--epochs=9 --name=override"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name(), "override");
  EXPECT_EQ(s->epochs(), 9);
  EXPECT_EQ(s->model().arch(), v1::MODEL_ARCH_CNN);
  EXPECT_EQ(s->batch_size(), 16);
  EXPECT_DOUBLE_EQ(s->optimizer().learning_rate(), 0.001);
}

TEST(BuildSubmitSpecTest, JsonFile) {
  const std::string path =
      WriteFile("base.json",
                R"({"name": "j", "model": {"arch": "MODEL_ARCH_MLP"},
          "dataset": {"format": "DATASET_FORMAT_SYNTHETIC",
                      "syntheticTrainSize": 10},
          "optimizer": {"kind": "OPTIMIZER_KIND_SGD", "learningRate": 0.1},
          "epochs": 1, "batchSize": 2, "minWorkers": 1, "maxWorkers": 1})");
  absl::StatusOr<v1::JobSpec> s = BuildSubmitSpec(path, {});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name(), "j");
}

TEST(BuildSubmitSpecTest, BadFilesStartWithThePath) {
  const std::string garbage = WriteFile("garbage.json", "{not json");
  absl::StatusOr<v1::JobSpec> s = BuildSubmitSpec(garbage, {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message().rfind(garbage, 0), 0u) << s.status();
  const std::string missing = garbage + ".missing.textproto";
  s = BuildSubmitSpec(missing, {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message().rfind(missing, 0), 0u) << s.status();
}

}  // namespace
}  // namespace ringleader::cli
