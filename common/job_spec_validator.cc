#include "common/job_spec_validator.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {
namespace {

constexpr int kMaxHiddenLayers = 16;
constexpr int kMaxHiddenWidth = 65536;
constexpr int64_t kMaxSyntheticSize = 100000000;  // 10^8
constexpr double kMaxLearningRate = 10;
constexpr int kMaxEpochs = 100000;
constexpr int kMaxBatchSize = 65536;
constexpr int kMaxWorkers = 4096;
constexpr int kMaxProgressEverySteps = 1000000;
constexpr int kMaxProgressMinIntervalMs = 3600000;  // An hour.
constexpr int kMaxRestarts = 1000;
constexpr int64_t kMaxLastCallMs = 600000;             // 10 minutes
constexpr int64_t kMaxRendezvousTimeoutMs = 86400000;  // 1 day
constexpr int kMaxGradientAccumulation = 1024;
constexpr int kMaxTimelineSteps = 100000;
constexpr size_t kMaxPathBytes = 4096;  // PATH_MAX.
constexpr int kMaxNpyInputs = 16;
constexpr int kMaxBlockSize = 1 << 20;
constexpr int kMaxChannels = 64;
constexpr int kMaxTopK = 1000;
constexpr int64_t kMaxClasses = 1 << 24;

// Every message has the same shape so users (and tests) can rely on the field
// path being there: "invalid job spec: <field> <rule> (got <value>)".
absl::Status Invalid(absl::string_view field, absl::string_view rule,
                     absl::string_view got) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid job spec: ", field, " ", rule, " (got ", got, ")"));
}

// User strings go into a one-line message: escaped, and cut if long.
std::string Quoted(absl::string_view s) {
  constexpr size_t kMaxShown = 80;
  const bool cut = s.size() > kMaxShown;
  return absl::StrCat("\"", absl::CHexEscape(s.substr(0, kMaxShown)),
                      cut ? "...\"" : "\"");
}

absl::Status InRange(absl::string_view field, int64_t value, int64_t lo,
                     int64_t hi) {
  if (value >= lo && value <= hi) return absl::OkStatus();
  return Invalid(field, absl::StrCat("must be in [", lo, ", ", hi, "]"),
                 absl::StrCat(value));
}

// An enum field must hold a value the enum defines other than UNSPECIFIED
// (unless `allow_unspecified`); proto3 parsers keep unknown numbers, so
// "defined" is checked too.
absl::Status DefinedEnum(absl::string_view field,
                         const google::protobuf::EnumDescriptor* type,
                         int value, bool allow_unspecified) {
  const google::protobuf::EnumValueDescriptor* v =
      type->FindValueByNumber(value);
  if (v != nullptr && (allow_unspecified || value != 0)) {
    return absl::OkStatus();
  }
  std::vector<std::string> names;
  for (int i = 0; i < type->value_count(); ++i) {
    if (allow_unspecified || type->value(i)->number() != 0) {
      names.push_back(type->value(i)->name());
    }
  }
  return Invalid(field,
                 absl::StrCat("must be one of ", absl::StrJoin(names, ", ")),
                 v != nullptr ? v->name() : absl::StrCat(value));
}

// [a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?: a DNS label, so the name can be used in
// Kubernetes objects and file names as is.
bool IsValidName(absl::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  for (char c : name) {
    if (!alnum(c) && c != '-') return false;
  }
  return alnum(name.front()) && alnum(name.back());
}

absl::Status CheckName(const v1::JobSpec& spec) {
  if (IsValidName(spec.name())) return absl::OkStatus();
  return Invalid("name", "must match [a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?",
                 Quoted(spec.name()));
}

absl::Status CheckModel(const v1::JobSpec& spec) {
  const v1::ModelSpec& m = spec.model();
  if (absl::Status s = DefinedEnum("model.arch", v1::ModelArch_descriptor(),
                                   m.arch(), /*allow_unspecified=*/false);
      !s.ok()) {
    return s;
  }
  const bool mlp = m.arch() == v1::MODEL_ARCH_MLP;
  if (!mlp && m.hidden_sizes_size() > 0) {
    return Invalid("model.hidden_sizes",
                   "is only valid with model.arch MODEL_ARCH_MLP",
                   absl::StrCat(m.hidden_sizes_size(), " sizes with ",
                                v1::ModelArch_Name(m.arch())));
  }
  if (m.hidden_sizes_size() > kMaxHiddenLayers) {
    return Invalid(
        "model.hidden_sizes",
        absl::StrCat("must have at most ", kMaxHiddenLayers, " entries"),
        absl::StrCat(m.hidden_sizes_size()));
  }
  for (int i = 0; i < m.hidden_sizes_size(); ++i) {
    if (absl::Status s = InRange(absl::StrCat("model.hidden_sizes[", i, "]"),
                                 m.hidden_sizes(i), 1, kMaxHiddenWidth);
        !s.ok()) {
      return s;
    }
  }
  const std::string& path = m.torchscript_path();
  if (m.arch() != v1::MODEL_ARCH_TORCHSCRIPT) {
    // The built-in MLP and CNN take 28x28 images (DatasetSpec formats IDX,
    // SYNTHETIC, or NPY arrays of that shape).
    if (spec.dataset().format() == v1::DATASET_FORMAT_TOKENS) {
      return Invalid("model.arch",
                     "must be MODEL_ARCH_TORCHSCRIPT with "
                     "DATASET_FORMAT_TOKENS: built-in models take images; use "
                     "a TorchScript model for token data",
                     v1::ModelArch_Name(m.arch()));
    }
    if (path.empty()) return absl::OkStatus();
    return Invalid("model.torchscript_path",
                   "is only valid with model.arch MODEL_ARCH_TORCHSCRIPT",
                   Quoted(path));
  }
  if (path.empty()) {
    return Invalid("model.torchscript_path",
                   "is required with model.arch MODEL_ARCH_TORCHSCRIPT",
                   Quoted(path));
  }
  // Something must precede the extension: ".pt" or "dir/.pt" name no module.
  auto has_stem_with = [&path](absl::string_view ext) {
    return absl::EndsWith(path, ext) && path.size() > ext.size() &&
           path[path.size() - ext.size() - 1] != '/';
  };
  if (!has_stem_with(".pt") && !has_stem_with(".pth")) {
    return Invalid("model.torchscript_path", "must name a .pt or .pth file",
                   Quoted(path));
  }
  return absl::OkStatus();
}

// A file a worker reads: required or not, at most PATH_MAX bytes, no NUL
// (which would end the path early in open()).
absl::Status CheckDataPath(absl::string_view field, const std::string& path,
                           absl::string_view required_with) {
  if (path.empty()) {
    if (required_with.empty()) return absl::OkStatus();
    return Invalid(field, absl::StrCat("is required with ", required_with),
                   Quoted(path));
  }
  if (path.size() > kMaxPathBytes) {
    return Invalid(field,
                   absl::StrCat("must be at most ", kMaxPathBytes, " bytes"),
                   absl::StrCat(path.size(), " bytes"));
  }
  if (path.find('\0') != std::string::npos) {
    return Invalid(field, "must not contain a NUL byte", Quoted(path));
  }
  return absl::OkStatus();
}

std::string FormatName(v1::DatasetFormat format) {
  const std::string& name = v1::DatasetFormat_Name(format);
  return name.empty() ? absl::StrCat(format) : name;
}

bool IsEmpty(const v1::NpySplit& split) {
  return split.inputs().empty() && split.targets().empty();
}

bool IsEmpty(const v1::InputTransform& t) {
  return t.scale() == 0 && t.mean().empty() && t.std().empty();
}

// A dataset field that belongs to one format. Set means a value other than
// the zero value: an empty message is no setting (proto3 JSON and text print
// it either way).
struct DatasetField {
  int number;  // In the proto: complaints come in field order.
  const char* name;
  v1::DatasetFormat format;
  bool set;
  std::string got;
};

std::vector<DatasetField> DatasetFields(const v1::DatasetSpec& d) {
  auto split = [](const v1::NpySplit& s) {
    return absl::StrCat(s.inputs_size(), " inputs, targets ",
                        Quoted(s.targets()));
  };
  const v1::InputTransform& t = d.transform();
  return {
      {2, "dataset.path", v1::DATASET_FORMAT_IDX, !d.path().empty(),
       Quoted(d.path())},
      {3, "dataset.synthetic_train_size", v1::DATASET_FORMAT_SYNTHETIC,
       d.synthetic_train_size() != 0, absl::StrCat(d.synthetic_train_size())},
      {4, "dataset.synthetic_test_size", v1::DATASET_FORMAT_SYNTHETIC,
       d.synthetic_test_size() != 0, absl::StrCat(d.synthetic_test_size())},
      {7, "dataset.train", v1::DATASET_FORMAT_NPY, !IsEmpty(d.train()),
       split(d.train())},
      {8, "dataset.test", v1::DATASET_FORMAT_NPY, !IsEmpty(d.test()),
       split(d.test())},
      {9, "dataset.transform", v1::DATASET_FORMAT_NPY, !IsEmpty(t),
       absl::StrCat("scale ", t.scale(), ", ", t.mean_size(), " means, ",
                    t.std_size(), " stds")},
      {10, "dataset.train_tokens", v1::DATASET_FORMAT_TOKENS,
       !d.train_tokens().empty(), Quoted(d.train_tokens())},
      {11, "dataset.test_tokens", v1::DATASET_FORMAT_TOKENS,
       !d.test_tokens().empty(), Quoted(d.test_tokens())},
      {12, "dataset.token_dtype", v1::DATASET_FORMAT_TOKENS,
       d.token_dtype() != 0,
       v1::TokenDtype_Name(d.token_dtype()).empty()
           ? absl::StrCat(d.token_dtype())
           : v1::TokenDtype_Name(d.token_dtype())},
      {13, "dataset.block_size", v1::DATASET_FORMAT_TOKENS, d.block_size() != 0,
       absl::StrCat(d.block_size())},
  };
}

// Fields numbered in [lo, hi) that another format owns must be unset: a
// value there would be silently ignored.
absl::Status CheckForeignFields(const v1::DatasetSpec& d, int lo, int hi) {
  for (const DatasetField& f : DatasetFields(d)) {
    if (f.number < lo || f.number >= hi || !f.set || f.format == d.format()) {
      continue;
    }
    return Invalid(f.name,
                   absl::StrCat("is only valid with ", FormatName(f.format)),
                   absl::StrCat(f.got, " with ", FormatName(d.format())));
  }
  return absl::OkStatus();
}

absl::Status CheckNpySplit(const std::string& field, const v1::NpySplit& s) {
  const std::string inputs = absl::StrCat(field, ".inputs");
  if (s.inputs().empty() || s.inputs_size() > kMaxNpyInputs) {
    return Invalid(inputs,
                   absl::StrCat("must name 1..", kMaxNpyInputs,
                                " .npy files with DATASET_FORMAT_NPY"),
                   absl::StrCat(s.inputs_size(), " files"));
  }
  for (int i = 0; i < s.inputs_size(); ++i) {
    if (absl::Status st = CheckDataPath(absl::StrCat(inputs, "[", i, "]"),
                                        s.inputs(i), "DATASET_FORMAT_NPY");
        !st.ok()) {
      return st;
    }
  }
  return CheckDataPath(absl::StrCat(field, ".targets"), s.targets(),
                       "DATASET_FORMAT_NPY");
}

// torchvision's Normalize: one mean and one std per channel.
absl::Status CheckTransform(const v1::InputTransform& t) {
  if (!(t.scale() >= 0) || !std::isfinite(t.scale())) {
    return Invalid("dataset.transform.scale", "must be finite and >= 0",
                   absl::StrCat(t.scale()));
  }
  if (t.mean_size() > kMaxChannels) {
    return Invalid("dataset.transform.mean",
                   absl::StrCat("must have at most ", kMaxChannels, " entries"),
                   absl::StrCat(t.mean_size()));
  }
  if (t.std_size() != t.mean_size()) {
    return Invalid("dataset.transform.std",
                   "must have as many entries as dataset.transform.mean",
                   absl::StrCat(t.std_size(), " vs ", t.mean_size()));
  }
  for (int c = 0; c < t.mean_size(); ++c) {
    if (!std::isfinite(t.mean(c))) {
      return Invalid(absl::StrCat("dataset.transform.mean[", c, "]"),
                     "must be finite", absl::StrCat(t.mean(c)));
    }
    if (!(t.std(c) > 0) || !std::isfinite(t.std(c))) {
      return Invalid(absl::StrCat("dataset.transform.std[", c, "]"),
                     "must be > 0 and finite", absl::StrCat(t.std(c)));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckNpy(const v1::DatasetSpec& d) {
  if (absl::Status s = CheckNpySplit("dataset.train", d.train()); !s.ok()) {
    return s;
  }
  // The test split is all or nothing, and feeds the same model inputs.
  if (!IsEmpty(d.test())) {
    if (absl::Status s = CheckNpySplit("dataset.test", d.test()); !s.ok()) {
      return s;
    }
    if (d.test().inputs_size() != d.train().inputs_size()) {
      return Invalid("dataset.test.inputs",
                     "must name as many files as dataset.train.inputs",
                     absl::StrCat(d.test().inputs_size(), " vs ",
                                  d.train().inputs_size()));
    }
  }
  return CheckTransform(d.transform());
}

absl::Status CheckTokens(const v1::DatasetSpec& d) {
  if (absl::Status s = CheckDataPath("dataset.train_tokens", d.train_tokens(),
                                     "DATASET_FORMAT_TOKENS");
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckDataPath("dataset.test_tokens", d.test_tokens(), "");
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          DefinedEnum("dataset.token_dtype", v1::TokenDtype_descriptor(),
                      d.token_dtype(), /*allow_unspecified=*/true);
      !s.ok()) {
    return s;
  }
  return InRange("dataset.block_size", d.block_size(), 1, kMaxBlockSize);
}

absl::Status CheckSynthetic(const v1::DatasetSpec& d) {
  if (absl::Status s = InRange("dataset.synthetic_train_size",
                               d.synthetic_train_size(), 1, kMaxSyntheticSize);
      !s.ok()) {
    return s;
  }
  return InRange("dataset.synthetic_test_size", d.synthetic_test_size(), 0,
                 kMaxSyntheticSize);
}

absl::Status CheckDataset(const v1::JobSpec& spec) {
  const v1::DatasetSpec& d = spec.dataset();
  if (absl::Status s =
          DefinedEnum("dataset.format", v1::DatasetFormat_descriptor(),
                      d.format(), /*allow_unspecified=*/false);
      !s.ok()) {
    return s;
  }
  // The format's own fields, and the first field number among them: other
  // formats' fields before it are complained about first, as a spec file
  // in field order reads.
  int first_own;
  absl::Status own;
  switch (d.format()) {
    case v1::DATASET_FORMAT_IDX:
      first_own = 2;
      own = CheckDataPath("dataset.path", d.path(), "DATASET_FORMAT_IDX");
      break;
    case v1::DATASET_FORMAT_SYNTHETIC:
      first_own = 3;
      own = CheckSynthetic(d);
      break;
    case v1::DATASET_FORMAT_NPY:
      first_own = 7;
      own = CheckNpy(d);
      break;
    default:  // DATASET_FORMAT_TOKENS.
      first_own = 10;
      own = CheckTokens(d);
      break;
  }
  if (absl::Status s = CheckForeignFields(d, 0, first_own); !s.ok()) return s;
  if (!own.ok()) return own;
  return CheckForeignFields(d, first_own, 1 << 29);
}

absl::Status CheckOptimizer(const v1::JobSpec& spec) {
  const v1::OptimizerSpec& o = spec.optimizer();
  if (absl::Status s =
          DefinedEnum("optimizer.kind", v1::OptimizerKind_descriptor(),
                      o.kind(), /*allow_unspecified=*/false);
      !s.ok()) {
    return s;
  }
  // Comparisons are written so that NaN fails them.
  const double lr = o.learning_rate();
  if (!(lr > 0) || !std::isfinite(lr)) {
    return Invalid("optimizer.learning_rate", "must be > 0 and finite",
                   absl::StrCat(lr));
  }
  if (lr > kMaxLearningRate) {
    return Invalid("optimizer.learning_rate",
                   absl::StrCat("must be <= ", kMaxLearningRate),
                   absl::StrCat(lr));
  }
  const double momentum = o.momentum();
  if (o.kind() != v1::OPTIMIZER_KIND_SGD) {
    if (momentum != 0) {
      return Invalid(
          "optimizer.momentum",
          "is only valid with optimizer.kind OPTIMIZER_KIND_SGD",
          absl::StrCat(momentum, " with ", v1::OptimizerKind_Name(o.kind())));
    }
  } else if (!(momentum >= 0 && momentum < 1)) {
    return Invalid("optimizer.momentum", "must be in [0, 1)",
                   absl::StrCat(momentum));
  }
  const double wd = o.weight_decay();
  if (!(wd >= 0 && wd <= 1)) {
    return Invalid("optimizer.weight_decay", "must be finite and in [0, 1]",
                   absl::StrCat(wd));
  }
  return absl::OkStatus();
}

absl::Status CheckTraining(const v1::JobSpec& spec) {
  if (absl::Status s = InRange("epochs", spec.epochs(), 1, kMaxEpochs);
      !s.ok()) {
    return s;
  }
  return InRange("batch_size", spec.batch_size(), 1, kMaxBatchSize);
}

absl::Status CheckWorkers(const v1::JobSpec& spec) {
  if (spec.min_workers() < 1) {
    return Invalid("min_workers", "must be >= 1",
                   absl::StrCat(spec.min_workers()));
  }
  if (spec.max_workers() < spec.min_workers()) {
    return Invalid("max_workers", "must be >= min_workers",
                   absl::StrCat(spec.max_workers(), " < ", spec.min_workers()));
  }
  if (spec.max_workers() > kMaxWorkers) {
    return Invalid("max_workers", absl::StrCat("must be <= ", kMaxWorkers),
                   absl::StrCat(spec.max_workers()));
  }
  return absl::OkStatus();  // seed: every value is fine.
}

// Absolute, so every worker means the same place whatever its working
// directory; no "..", so the path cannot step out of a mount it names.
bool IsCleanAbsolutePath(absl::string_view path) {
  if (!absl::StartsWith(path, "/")) return false;
  if (path.find('\0') != absl::string_view::npos) return false;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") return false;
  }
  return true;
}

absl::Status CheckCheckpoints(const v1::JobSpec& spec) {
  const std::string& dir = spec.checkpoint_dir();
  if (!dir.empty() && !IsCleanAbsolutePath(dir)) {
    return Invalid("checkpoint_dir",
                   "must be empty or an absolute path without \"..\"",
                   Quoted(dir));
  }
  const int32_t every = spec.checkpoint_every_steps();
  if (every < 0) {
    return Invalid("checkpoint_every_steps", "must be >= 0",
                   absl::StrCat(every));
  }
  if (every > 0 && dir.empty()) {
    return Invalid("checkpoint_every_steps", "> 0 requires checkpoint_dir",
                   absl::StrCat(every, " with empty checkpoint_dir"));
  }
  return absl::OkStatus();
}

absl::Status CheckRuntime(const v1::JobSpec& spec) {
  if (absl::Status s =
          InRange("progress_every_steps", spec.progress_every_steps(), 0,
                  kMaxProgressEverySteps);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          InRange("progress_min_interval_ms", spec.progress_min_interval_ms(),
                  0, kMaxProgressMinIntervalMs);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          InRange("max_restarts", spec.max_restarts(), 0, kMaxRestarts);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = DefinedEnum("device", v1::DeviceKind_descriptor(),
                                   spec.device(), /*allow_unspecified=*/true);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          InRange("rendezvous_last_call_ms", spec.rendezvous_last_call_ms(), 0,
                  kMaxLastCallMs);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          InRange("rendezvous_timeout_ms", spec.rendezvous_timeout_ms(), 0,
                  kMaxRendezvousTimeoutMs);
      !s.ok()) {
    return s;
  }
  if (spec.resume() && spec.checkpoint_dir().empty()) {
    return Invalid("resume", "requires checkpoint_dir",
                   "true with empty checkpoint_dir");
  }
  return InRange("gradient_accumulation_steps",
                 spec.gradient_accumulation_steps(), 0,
                 kMaxGradientAccumulation);
}

// Buckets below 1 KiB would mean one all-reduce per few floats; above 1 GiB
// one bucket would hold any model we train.
absl::Status CheckDdp(const v1::JobSpec& spec) {
  constexpr int64_t kMinBucket = 1 << 10, kMaxBucket = int64_t{1} << 30;
  for (const auto& [field, value] :
       {std::pair<const char*, int64_t>{"ddp.bucket_cap_bytes",
                                        spec.ddp().bucket_cap_bytes()},
        {"ddp.first_bucket_bytes", spec.ddp().first_bucket_bytes()}}) {
    if (value == 0) continue;  // The default.
    if (absl::Status s = InRange(field, value, kMinBucket, kMaxBucket);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s =
          DefinedEnum("ddp.cpu_transport", v1::CpuTransport_descriptor(),
                      spec.ddp().cpu_transport(), /*allow_unspecified=*/true);
      !s.ok()) {
    return s;
  }
  // Every transport and device can all-reduce both 16-bit types (Gloo and
  // shared memory with their own reduction, NCCL natively), so only the
  // value itself can be wrong.
  return DefinedEnum("ddp.gradient_compression",
                     v1::GradientCompression_descriptor(),
                     spec.ddp().gradient_compression(),
                     /*allow_unspecified=*/true);
}

absl::Status CheckTimeline(const v1::JobSpec& spec) {
  const std::string& dir = spec.timeline_dir();
  if (!dir.empty() && !IsCleanAbsolutePath(dir)) {
    return Invalid("timeline_dir",
                   "must be empty or an absolute path without \"..\"",
                   Quoted(dir));
  }
  if (absl::Status s = InRange("timeline_steps", spec.timeline_steps(), 0,
                               kMaxTimelineSteps);
      !s.ok()) {
    return s;
  }
  if (spec.timeline_steps() > 0 && dir.empty()) {
    return Invalid(
        "timeline_steps", "> 0 requires timeline_dir",
        absl::StrCat(spec.timeline_steps(), " with empty timeline_dir"));
  }
  return absl::OkStatus();
}

// The loss the worker computes: LOSS_KIND_UNSPECIFIED is the task's usual
// one (cross-entropy, or MSE for regression).
v1::LossKind EffectiveLoss(const v1::TaskSpec& t) {
  if (t.loss() != v1::LOSS_KIND_UNSPECIFIED) return t.loss();
  return t.kind() == v1::TASK_KIND_REGRESSION ? v1::LOSS_KIND_MSE
                                              : v1::LOSS_KIND_CROSS_ENTROPY;
}

// TASK_KIND_UNSPECIFIED means classification.
v1::TaskKind EffectiveKind(const v1::TaskSpec& t) {
  return t.kind() == v1::TASK_KIND_UNSPECIFIED ? v1::TASK_KIND_CLASSIFICATION
                                               : t.kind();
}

// Which losses fit which task, and which models can learn it.
absl::Status CheckTaskLoss(const v1::JobSpec& spec) {
  const v1::TaskSpec& t = spec.task();
  const v1::TaskKind kind = EffectiveKind(t);
  const v1::ModelArch arch = spec.model().arch();
  if (arch != v1::MODEL_ARCH_TORCHSCRIPT &&
      kind != v1::TASK_KIND_CLASSIFICATION) {
    return Invalid("task.kind",
                   absl::StrCat("must be TASK_KIND_CLASSIFICATION with ",
                                v1::ModelArch_Name(arch),
                                ": built-in models classify images; use a "
                                "TorchScript model for other tasks"),
                   v1::TaskKind_Name(t.kind()));
  }
  if (t.loss() == v1::LOSS_KIND_MODEL) {
    if (arch == v1::MODEL_ARCH_TORCHSCRIPT) return absl::OkStatus();
    return Invalid(
        "task.loss",
        "LOSS_KIND_MODEL requires model.arch "
        "MODEL_ARCH_TORCHSCRIPT (only a TorchScript model computes "
        "its own loss)",
        absl::StrCat("LOSS_KIND_MODEL with ", v1::ModelArch_Name(arch)));
  }
  const bool regression = kind == v1::TASK_KIND_REGRESSION;
  const bool cross_entropy = EffectiveLoss(t) == v1::LOSS_KIND_CROSS_ENTROPY;
  if (regression == cross_entropy) {
    return Invalid(
        "task.loss",
        regression ? "must be LOSS_KIND_MSE, LOSS_KIND_L1 or LOSS_KIND_MODEL "
                     "for TASK_KIND_REGRESSION"
                   : absl::StrCat("must be LOSS_KIND_CROSS_ENTROPY or "
                                  "LOSS_KIND_MODEL for ",
                                  v1::TaskKind_Name(kind)),
        v1::LossKind_Name(t.loss()));
  }
  return absl::OkStatus();
}

// The knobs of the cross-entropy loss and of classification metrics.
absl::Status CheckTaskOptions(const v1::TaskSpec& t) {
  const v1::LossKind loss = EffectiveLoss(t);
  const bool mse_or_l1 = loss == v1::LOSS_KIND_MSE || loss == v1::LOSS_KIND_L1;
  if (t.has_ignore_index() && mse_or_l1) {
    return Invalid(
        "task.ignore_index", "is only valid with cross-entropy",
        absl::StrCat(t.ignore_index(), " with ", v1::LossKind_Name(loss)));
  }
  const double ls = t.label_smoothing();
  if (!(ls >= 0 && ls < 1)) {  // NaN fails too.
    return Invalid("task.label_smoothing", "must be in [0, 1)",
                   absl::StrCat(ls));
  }
  if (ls != 0 && loss != v1::LOSS_KIND_CROSS_ENTROPY) {
    return Invalid("task.label_smoothing", "is only valid with cross-entropy",
                   absl::StrCat(ls, " with ", v1::LossKind_Name(loss)));
  }
  if (absl::Status s = InRange("task.top_k", t.top_k(), 0, kMaxTopK); !s.ok()) {
    return s;
  }
  if (absl::Status s =
          InRange("task.num_classes", t.num_classes(), 0, kMaxClasses);
      !s.ok()) {
    return s;
  }
  // Regression has neither classes nor a top k: a value would be ignored.
  const bool regression = EffectiveKind(t) == v1::TASK_KIND_REGRESSION;
  for (const auto& [field, value] :
       {std::pair<const char*, int64_t>{"task.top_k", t.top_k()},
        {"task.num_classes", t.num_classes()}}) {
    if (regression && value != 0) {
      return Invalid(field, "is not valid with TASK_KIND_REGRESSION",
                     absl::StrCat(value));
    }
  }
  if (t.top_k() > 0 && t.num_classes() > 0 && t.top_k() >= t.num_classes()) {
    return Invalid(
        "task.top_k", "must be less than task.num_classes",
        absl::StrCat(t.top_k(), " with ", t.num_classes(), " classes"));
  }
  return absl::OkStatus();
}

absl::Status CheckTask(const v1::JobSpec& spec) {
  const v1::TaskSpec& t = spec.task();
  if (absl::Status s = DefinedEnum("task.kind", v1::TaskKind_descriptor(),
                                   t.kind(), /*allow_unspecified=*/true);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = DefinedEnum("task.loss", v1::LossKind_descriptor(),
                                   t.loss(), /*allow_unspecified=*/true);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckTaskLoss(spec); !s.ok()) return s;
  return CheckTaskOptions(t);
}

// Rank 0 writes these files after training: a bad path must fail now, not
// after the whole run.
absl::Status CheckExportPath(absl::string_view field, const std::string& path) {
  if (path.empty()) return absl::OkStatus();
  if (path.size() > kMaxPathBytes) {
    return Invalid(field,
                   absl::StrCat("must be at most ", kMaxPathBytes, " bytes"),
                   absl::StrCat(path.size(), " bytes"));
  }
  if (!IsCleanAbsolutePath(path)) {
    return Invalid(field, "must be empty or an absolute path without \"..\"",
                   Quoted(path));
  }
  if (absl::EndsWith(path, "/") || absl::EndsWith(path, "/.")) {
    return Invalid(field, "must name a file, not a directory", Quoted(path));
  }
  return absl::OkStatus();
}

absl::Status CheckExport(const v1::JobSpec& spec) {
  const v1::ExportSpec& e = spec.export_();
  if (absl::Status s =
          CheckExportPath("export.torchscript_path", e.torchscript_path());
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckExportPath("export.safetensors_path", e.safetensors_path());
      !s.ok()) {
    return s;
  }
  if (!e.safetensors_path().empty() &&
      e.safetensors_path() == e.torchscript_path()) {
    return Invalid("export.safetensors_path",
                   "must differ from export.torchscript_path",
                   Quoted(e.safetensors_path()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateJobSpec(const v1::JobSpec& spec) {
  // In proto field order, so the first complaint is the first bad line of a
  // spec file written in that order.
  using Check = absl::Status (*)(const v1::JobSpec&);
  for (Check check :
       {&CheckName, &CheckModel, &CheckDataset, &CheckOptimizer, &CheckTraining,
        &CheckWorkers, &CheckCheckpoints, &CheckRuntime, &CheckDdp,
        &CheckTimeline, &CheckTask, &CheckExport}) {
    if (absl::Status s = check(spec); !s.ok()) return s;
  }
  return absl::OkStatus();
}

v1::JobSpec WithDefaults(v1::JobSpec spec) {
  if (spec.progress_every_steps() == 0) spec.set_progress_every_steps(10);
  if (spec.progress_min_interval_ms() == 0) {
    spec.set_progress_min_interval_ms(100);
  }
  if (spec.rendezvous_last_call_ms() == 0) {
    spec.set_rendezvous_last_call_ms(1000);
  }
  if (spec.rendezvous_timeout_ms() == 0) {
    spec.set_rendezvous_timeout_ms(600000);
  }
  if (spec.gradient_accumulation_steps() == 0) {
    spec.set_gradient_accumulation_steps(1);
  }
  if (spec.device() == v1::DEVICE_KIND_UNSPECIFIED) {
    spec.set_device(v1::DEVICE_KIND_CPU);
  }
  if (spec.task().kind() == v1::TASK_KIND_UNSPECIFIED) {
    spec.mutable_task()->set_kind(v1::TASK_KIND_CLASSIFICATION);
  }
  if (spec.model().arch() == v1::MODEL_ARCH_MLP &&
      spec.model().hidden_sizes_size() == 0) {
    spec.mutable_model()->add_hidden_sizes(256);
    spec.mutable_model()->add_hidden_sizes(128);
  }
  return spec;
}

}  // namespace ringleader
