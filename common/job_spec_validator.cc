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

absl::Status CheckDataset(const v1::JobSpec& spec) {
  const v1::DatasetSpec& d = spec.dataset();
  if (absl::Status s =
          DefinedEnum("dataset.format", v1::DatasetFormat_descriptor(),
                      d.format(), /*allow_unspecified=*/false);
      !s.ok()) {
    return s;
  }
  if (d.format() == v1::DATASET_FORMAT_IDX) {
    if (d.path().empty()) {
      return Invalid("dataset.path", "is required with DATASET_FORMAT_IDX",
                     Quoted(d.path()));
    }
    // Sizes come from the files; a size here would be silently ignored.
    if (d.synthetic_train_size() != 0) {
      return Invalid("dataset.synthetic_train_size",
                     "is only valid with DATASET_FORMAT_SYNTHETIC",
                     absl::StrCat(d.synthetic_train_size()));
    }
    if (d.synthetic_test_size() != 0) {
      return Invalid("dataset.synthetic_test_size",
                     "is only valid with DATASET_FORMAT_SYNTHETIC",
                     absl::StrCat(d.synthetic_test_size()));
    }
    return absl::OkStatus();
  }
  // DATASET_FORMAT_SYNTHETIC.
  if (!d.path().empty()) {
    return Invalid("dataset.path",
                   "must be empty with DATASET_FORMAT_SYNTHETIC",
                   Quoted(d.path()));
  }
  if (absl::Status s = InRange("dataset.synthetic_train_size",
                               d.synthetic_train_size(), 1, kMaxSyntheticSize);
      !s.ok()) {
    return s;
  }
  return InRange("dataset.synthetic_test_size", d.synthetic_test_size(), 0,
                 kMaxSyntheticSize);
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
  return DefinedEnum("ddp.cpu_transport", v1::CpuTransport_descriptor(),
                     spec.ddp().cpu_transport(), /*allow_unspecified=*/true);
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

}  // namespace

absl::Status ValidateJobSpec(const v1::JobSpec& spec) {
  // In proto field order, so the first complaint is the first bad line of a
  // spec file written in that order.
  using Check = absl::Status (*)(const v1::JobSpec&);
  for (Check check : {&CheckName, &CheckModel, &CheckDataset, &CheckOptimizer,
                      &CheckTraining, &CheckWorkers, &CheckCheckpoints,
                      &CheckRuntime, &CheckDdp, &CheckTimeline}) {
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
  if (spec.model().arch() == v1::MODEL_ARCH_MLP &&
      spec.model().hidden_sizes_size() == 0) {
    spec.mutable_model()->add_hidden_sizes(256);
    spec.mutable_model()->add_hidden_sizes(128);
  }
  return spec;
}

}  // namespace ringleader
