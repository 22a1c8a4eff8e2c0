#include "common/job_spec_validator.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/quote_for_error.h"
#include "common/shard_pattern.h"
#include "common/spec_violations.h"
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
constexpr int kMaxBucketsInFlight = 8;  // DdpSpec.buckets_in_flight.
constexpr size_t kMaxPathBytes = 4096;  // PATH_MAX.
// The whole spec, serialized: every heartbeat that assigns the job carries
// it, so a spec near a gRPC message limit would wedge every idle worker.
constexpr size_t kMaxSpecBytes = 64 << 10;
constexpr int kMaxNpyInputs = 16;
constexpr int kMaxBlockSize = 1 << 20;
constexpr int kMaxChannels = 64;
constexpr int kMaxTopK = 1000;
constexpr int64_t kMaxClasses = 1 << 24;
constexpr int64_t kMaxScheduleSteps = 1000000000;  // 10^9 optimizer steps.
constexpr int kMaxImageSize = 4096;
constexpr int kMaxShardEntries = 1024;
constexpr int kMaxLoaderThreads = 256;
constexpr int kMaxPrefetchBatches = 1024;

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

// The spec as a whole; its fields have bounds of their own, but together
// they could still pass this.
void CheckSpecSize(const v1::JobSpec& spec, SpecViolations* v) {
  const size_t bytes = spec.ByteSizeLong();
  if (bytes <= kMaxSpecBytes) return;
  v->Check(Invalid(
      "JobSpec",
      absl::StrCat("must be at most ", kMaxSpecBytes, " bytes serialized"),
      absl::StrCat(bytes, " bytes")));
}

void CheckName(const v1::JobSpec& spec, SpecViolations* v) {
  if (IsValidName(spec.name())) return;
  v->Check(Invalid("name", "must match [a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?",
                   QuoteForError(spec.name())));
}

// Where a job must never write: the file system's root and the kernel's and
// the system's own trees. A path is under one when it is it or starts with
// it and a "/".
bool IsSystemPath(absl::string_view path) {
  if (absl::StripSuffix(path, "/").empty()) return true;  // "/" itself.
  for (absl::string_view dir : {"/proc", "/sys", "/dev", "/etc"}) {
    if (path == dir || absl::StartsWith(path, absl::StrCat(dir, "/"))) {
      return true;
    }
  }
  return false;
}

// Whether a job reads or writes what a path names.
enum class PathUse { kRead, kWrite };

// A path in the spec: required or not (`required_with` says with what), at
// most PATH_MAX bytes, clean and absolute; a path the job writes is not a
// system one.
absl::Status CheckPath(absl::string_view field, const std::string& path,
                       absl::string_view required_with,
                       PathUse use = PathUse::kRead) {
  if (path.empty()) {
    if (required_with.empty()) return absl::OkStatus();
    return Invalid(field, absl::StrCat("is required with ", required_with),
                   QuoteForError(path));
  }
  if (path.size() > kMaxPathBytes) {
    return Invalid(field,
                   absl::StrCat("must be at most ", kMaxPathBytes, " bytes"),
                   absl::StrCat(path.size(), " bytes"));
  }
  if (path.find('\0') != std::string::npos) {
    return Invalid(field, "must not contain a NUL byte", QuoteForError(path));
  }
  if (!IsCleanAbsolutePath(path)) {
    return Invalid(field,
                   "must be an absolute path with no empty, \".\" or \"..\" "
                   "component",
                   QuoteForError(path));
  }
  if (use == PathUse::kWrite && IsSystemPath(path)) {
    return Invalid(field, "must not be / or under /proc, /sys, /dev or /etc",
                   QuoteForError(path));
  }
  return absl::OkStatus();
}

// Rules that relate another field to the model hold only once model.arch is
// a real architecture: against an unset one they would only echo its error.
bool ArchIsSet(const v1::ModelSpec& m) {
  return m.arch() != v1::MODEL_ARCH_UNSPECIFIED &&
         v1::ModelArch_IsValid(m.arch());
}

void CheckHiddenSizes(const v1::ModelSpec& m, SpecViolations* v) {
  if (m.arch() != v1::MODEL_ARCH_MLP && m.hidden_sizes_size() > 0) {
    v->Check(Invalid("model.hidden_sizes",
                     "is only valid with model.arch MODEL_ARCH_MLP",
                     absl::StrCat(m.hidden_sizes_size(), " sizes with ",
                                  v1::ModelArch_Name(m.arch()))));
    return;
  }
  if (m.hidden_sizes_size() > kMaxHiddenLayers) {
    v->Check(Invalid(
        "model.hidden_sizes",
        absl::StrCat("must have at most ", kMaxHiddenLayers, " entries"),
        absl::StrCat(m.hidden_sizes_size())));
    return;
  }
  for (int i = 0; i < m.hidden_sizes_size(); ++i) {
    v->Check(InRange(absl::StrCat("model.hidden_sizes[", i, "]"),
                     m.hidden_sizes(i), 1, kMaxHiddenWidth));
  }
}

absl::Status CheckTorchScriptPath(const v1::ModelSpec& m) {
  const std::string& path = m.torchscript_path();
  if (m.arch() != v1::MODEL_ARCH_TORCHSCRIPT) {
    if (path.empty()) return absl::OkStatus();
    return Invalid("model.torchscript_path",
                   "is only valid with model.arch MODEL_ARCH_TORCHSCRIPT",
                   QuoteForError(path));
  }
  if (path.empty()) {
    return Invalid("model.torchscript_path",
                   "is required with model.arch MODEL_ARCH_TORCHSCRIPT",
                   QuoteForError(path));
  }
  if (absl::Status s = CheckPath("model.torchscript_path", path, ""); !s.ok()) {
    return s;
  }
  // Something must precede the extension: ".pt" or "dir/.pt" name no module.
  auto has_stem_with = [&path](absl::string_view ext) {
    return absl::EndsWith(path, ext) && path.size() > ext.size() &&
           path[path.size() - ext.size() - 1] != '/';
  };
  if (!has_stem_with(".pt") && !has_stem_with(".pth")) {
    return Invalid("model.torchscript_path", "must name a .pt or .pth file",
                   QuoteForError(path));
  }
  return absl::OkStatus();
}

void CheckModel(const v1::JobSpec& spec, SpecViolations* v) {
  const v1::ModelSpec& m = spec.model();
  // The model's other rules all depend on the architecture.
  if (!v->Check(DefinedEnum("model.arch", v1::ModelArch_descriptor(), m.arch(),
                            /*allow_unspecified=*/false))) {
    return;
  }
  // The built-in MLP and CNN take 28x28 images (DatasetSpec formats IDX,
  // SYNTHETIC, or NPY arrays of that shape).
  const v1::DatasetFormat f = spec.dataset().format();
  if (m.arch() != v1::MODEL_ARCH_TORCHSCRIPT &&
      (f == v1::DATASET_FORMAT_IMAGE_FOLDER ||
       f == v1::DATASET_FORMAT_TAR_SHARDS)) {
    v->Check(Invalid("model.arch",
                     "must be MODEL_ARCH_TORCHSCRIPT with the image formats: "
                     "the built-in models take 28x28 grey images",
                     v1::ModelArch_Name(m.arch())));
  }
  if (m.arch() != v1::MODEL_ARCH_TORCHSCRIPT &&
      spec.dataset().format() == v1::DATASET_FORMAT_TOKENS) {
    v->Check(Invalid("model.arch",
                     "must be MODEL_ARCH_TORCHSCRIPT with "
                     "DATASET_FORMAT_TOKENS: built-in models take images; use "
                     "a TorchScript model for token data",
                     v1::ModelArch_Name(m.arch())));
  }
  CheckHiddenSizes(m, v);
  v->Check(CheckTorchScriptPath(m));
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
  // Also valid with both image formats (IMAGE_FOLDER and TAR_SHARDS).
  bool images = false;
};

bool IsImageFormat(v1::DatasetFormat f) {
  return f == v1::DATASET_FORMAT_IMAGE_FOLDER ||
         f == v1::DATASET_FORMAT_TAR_SHARDS;
}

bool IsEmpty(const v1::ImageSpec& i) { return i.ByteSizeLong() == 0; }

std::vector<DatasetField> DatasetFields(const v1::DatasetSpec& d) {
  auto split = [](const v1::NpySplit& s) {
    return absl::StrCat(s.inputs_size(), " inputs, targets ",
                        QuoteForError(s.targets()));
  };
  const v1::InputTransform& t = d.transform();
  return {
      {2, "dataset.path", v1::DATASET_FORMAT_IDX, !d.path().empty(),
       QuoteForError(d.path())},
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
                    t.std_size(), " stds"),
       true},
      {10, "dataset.train_tokens", v1::DATASET_FORMAT_TOKENS,
       !d.train_tokens().empty(), QuoteForError(d.train_tokens())},
      {11, "dataset.test_tokens", v1::DATASET_FORMAT_TOKENS,
       !d.test_tokens().empty(), QuoteForError(d.test_tokens())},
      {12, "dataset.token_dtype", v1::DATASET_FORMAT_TOKENS,
       d.token_dtype() != 0,
       v1::TokenDtype_Name(d.token_dtype()).empty()
           ? absl::StrCat(d.token_dtype())
           : v1::TokenDtype_Name(d.token_dtype())},
      {13, "dataset.block_size", v1::DATASET_FORMAT_TOKENS, d.block_size() != 0,
       absl::StrCat(d.block_size())},
      {21, "dataset.train_root", v1::DATASET_FORMAT_IMAGE_FOLDER,
       !d.train_root().empty(), QuoteForError(d.train_root())},
      {22, "dataset.test_root", v1::DATASET_FORMAT_IMAGE_FOLDER,
       !d.test_root().empty(), QuoteForError(d.test_root())},
      {23, "dataset.train_shards", v1::DATASET_FORMAT_TAR_SHARDS,
       d.train_shards_size() > 0,
       absl::StrCat(d.train_shards_size(), " entries")},
      {24, "dataset.test_shards", v1::DATASET_FORMAT_TAR_SHARDS,
       d.test_shards_size() > 0,
       absl::StrCat(d.test_shards_size(), " entries")},
      {25, "dataset.image", v1::DATASET_FORMAT_IMAGE_FOLDER,
       !IsEmpty(d.image()), d.image().ShortDebugString(), true},
      {28, "dataset.skip_corrupt", v1::DATASET_FORMAT_IMAGE_FOLDER,
       d.skip_corrupt(), "true", true},
  };
}

// Fields numbered in [lo, hi) that another format owns must be unset: a
// value there would be silently ignored.
void CheckForeignFields(const v1::DatasetSpec& d, int lo, int hi,
                        SpecViolations* v) {
  for (const DatasetField& f : DatasetFields(d)) {
    if (f.number < lo || f.number >= hi || !f.set || f.format == d.format() ||
        (f.images && IsImageFormat(d.format()))) {
      continue;
    }
    std::string with = FormatName(f.format);
    if (f.images) {
      with = absl::StrCat(
          f.format == v1::DATASET_FORMAT_NPY ? "DATASET_FORMAT_NPY, " : "",
          "DATASET_FORMAT_IMAGE_FOLDER or DATASET_FORMAT_TAR_SHARDS");
    }
    v->Check(Invalid(f.name, absl::StrCat("is only valid with ", with),
                     absl::StrCat(f.got, " with ", FormatName(d.format()))));
  }
}

bool HasInputCountInRange(const v1::NpySplit& s) {
  return !s.inputs().empty() && s.inputs_size() <= kMaxNpyInputs;
}

void CheckNpySplit(const std::string& field, const v1::NpySplit& s,
                   SpecViolations* v) {
  const std::string inputs = absl::StrCat(field, ".inputs");
  if (!HasInputCountInRange(s)) {
    v->Check(Invalid(inputs,
                     absl::StrCat("must name 1..", kMaxNpyInputs,
                                  " .npy files with DATASET_FORMAT_NPY"),
                     absl::StrCat(s.inputs_size(), " files")));
  } else {
    for (int i = 0; i < s.inputs_size(); ++i) {
      v->Check(CheckPath(absl::StrCat(inputs, "[", i, "]"), s.inputs(i),
                         "DATASET_FORMAT_NPY"));
    }
  }
  v->Check(CheckPath(absl::StrCat(field, ".targets"), s.targets(),
                     "DATASET_FORMAT_NPY"));
}

// torchvision's Normalize: one mean and one std per channel.
void CheckTransform(const v1::InputTransform& t, SpecViolations* v) {
  if (!(t.scale() >= 0) || !std::isfinite(t.scale())) {
    v->Check(Invalid("dataset.transform.scale", "must be finite and >= 0",
                     absl::StrCat(t.scale())));
  }
  // The channels are checked one by one only when they pair up.
  if (t.mean_size() > kMaxChannels) {
    v->Check(
        Invalid("dataset.transform.mean",
                absl::StrCat("must have at most ", kMaxChannels, " entries"),
                absl::StrCat(t.mean_size())));
    return;
  }
  if (t.std_size() != t.mean_size()) {
    v->Check(Invalid("dataset.transform.std",
                     "must have as many entries as dataset.transform.mean",
                     absl::StrCat(t.std_size(), " vs ", t.mean_size())));
    return;
  }
  for (int c = 0; c < t.mean_size(); ++c) {
    if (!std::isfinite(t.mean(c))) {
      v->Check(Invalid(absl::StrCat("dataset.transform.mean[", c, "]"),
                       "must be finite", absl::StrCat(t.mean(c))));
    }
    if (!(t.std(c) > 0) || !std::isfinite(t.std(c))) {
      v->Check(Invalid(absl::StrCat("dataset.transform.std[", c, "]"),
                       "must be > 0 and finite", absl::StrCat(t.std(c))));
    }
  }
}

void CheckNpy(const v1::DatasetSpec& d, SpecViolations* v) {
  CheckNpySplit("dataset.train", d.train(), v);
  // The test split is all or nothing, and feeds the same model inputs.
  if (!IsEmpty(d.test())) {
    CheckNpySplit("dataset.test", d.test(), v);
    if (HasInputCountInRange(d.train()) && HasInputCountInRange(d.test()) &&
        d.test().inputs_size() != d.train().inputs_size()) {
      v->Check(Invalid("dataset.test.inputs",
                       "must name as many files as dataset.train.inputs",
                       absl::StrCat(d.test().inputs_size(), " vs ",
                                    d.train().inputs_size())));
    }
  }
  CheckTransform(d.transform(), v);
}

void CheckTokens(const v1::DatasetSpec& d, SpecViolations* v) {
  v->Check(CheckPath("dataset.train_tokens", d.train_tokens(),
                     "DATASET_FORMAT_TOKENS"));
  v->Check(CheckPath("dataset.test_tokens", d.test_tokens(), ""));
  v->Check(DefinedEnum("dataset.token_dtype", v1::TokenDtype_descriptor(),
                       d.token_dtype(), /*allow_unspecified=*/true));
  v->Check(InRange("dataset.block_size", d.block_size(), 1, kMaxBlockSize));
}

void CheckSynthetic(const v1::DatasetSpec& d, SpecViolations* v) {
  v->Check(InRange("dataset.synthetic_train_size", d.synthetic_train_size(), 1,
                   kMaxSyntheticSize));
  v->Check(InRange("dataset.synthetic_test_size", d.synthetic_test_size(), 0,
                   kMaxSyntheticSize));
}

// The first field number among the format's own fields: other formats'
// fields before it are complained about first, as a spec file in field order
// reads.
int FirstOwnField(v1::DatasetFormat format) {
  switch (format) {
    case v1::DATASET_FORMAT_IDX:
      return 2;
    case v1::DATASET_FORMAT_SYNTHETIC:
      return 3;
    case v1::DATASET_FORMAT_NPY:
      return 7;
    case v1::DATASET_FORMAT_TOKENS:
      return 10;
    default:  // The image formats, whose transform is field 9.
      return 9;
  }
}

// Shard entries: paths whose brace patterns expand (common/shard_pattern.h).
void CheckShards(const std::string& field,
                 const google::protobuf::RepeatedPtrField<std::string>& shards,
                 bool required, SpecViolations* v) {
  if (shards.empty() && required) {
    v->Check(Invalid(field, "is required with DATASET_FORMAT_TAR_SHARDS",
                     "no entries"));
    return;
  }
  if (shards.size() > kMaxShardEntries) {
    v->Check(Invalid(
        field, absl::StrCat("must have at most ", kMaxShardEntries, " entries"),
        absl::StrCat(shards.size())));
    return;
  }
  for (int i = 0; i < shards.size(); ++i) {
    const std::string name = absl::StrCat(field, "[", i, "]");
    if (!v->Check(CheckPath(name, shards[i], "DATASET_FORMAT_TAR_SHARDS"))) {
      continue;
    }
    absl::StatusOr<std::vector<std::string>> expanded =
        ExpandShardPattern(shards[i]);
    if (!expanded.ok()) {
      v->Check(Invalid(name,
                       absl::StrCat("must be a path or a brace pattern (",
                                    expanded.status().message(), ")"),
                       QuoteForError(shards[i])));
    }
  }
}

// A range [lo, hi] that is unset (the default) or 0 < lo <= hi <= top.
void CheckRange(const char* field, bool has_lo, double lo, bool has_hi,
                double hi, double default_lo, double default_hi, double top,
                SpecViolations* v) {
  const double a = has_lo ? lo : default_lo;
  const double b = has_hi ? hi : default_hi;
  if (!(a > 0 && a <= b && b <= top)) {
    v->Check(Invalid(field, absl::StrCat("must be 0 < min <= max <= ", top),
                     absl::StrCat(a, " .. ", b)));
  }
}

void CheckImageSpec(const v1::ImageSpec& i, SpecViolations* v) {
  v->Check(InRange("dataset.image.size", i.size(), 0, kMaxImageSize));
  const int size = i.size() == 0 ? 224 : i.size();
  if (i.resize_size() != 0) {
    v->Check(InRange("dataset.image.resize_size", i.resize_size(), size,
                     2 * kMaxImageSize));
  }
  CheckRange("dataset.image.min_scale/max_scale", i.has_min_scale(),
             i.min_scale(), i.has_max_scale(), i.max_scale(), 0.08, 1.0, 1.0,
             v);
  CheckRange("dataset.image.min_ratio/max_ratio", i.has_min_ratio(),
             i.min_ratio(), i.has_max_ratio(), i.max_ratio(), 3.0 / 4, 4.0 / 3,
             100.0, v);
}

void CheckImages(const v1::DatasetSpec& d, SpecViolations* v) {
  if (d.format() == v1::DATASET_FORMAT_IMAGE_FOLDER) {
    v->Check(CheckPath("dataset.train_root", d.train_root(),
                       "DATASET_FORMAT_IMAGE_FOLDER"));
    v->Check(CheckPath("dataset.test_root", d.test_root(), ""));
  } else {
    CheckShards("dataset.train_shards", d.train_shards(), true, v);
    CheckShards("dataset.test_shards", d.test_shards(), false, v);
  }
  CheckImageSpec(d.image(), v);
  CheckTransform(d.transform(), v);
  if (d.transform().mean_size() != 0 && d.transform().mean_size() != 3) {
    v->Check(Invalid("dataset.transform.mean",
                     "must have 3 entries (RGB) or none with the image formats",
                     absl::StrCat(d.transform().mean_size(), " entries")));
  }
}

void CheckOwnFields(const v1::DatasetSpec& d, SpecViolations* v) {
  switch (d.format()) {
    case v1::DATASET_FORMAT_IDX:
      v->Check(CheckPath("dataset.path", d.path(), "DATASET_FORMAT_IDX"));
      return;
    case v1::DATASET_FORMAT_SYNTHETIC:
      return CheckSynthetic(d, v);
    case v1::DATASET_FORMAT_NPY:
      return CheckNpy(d, v);
    case v1::DATASET_FORMAT_TOKENS:
      return CheckTokens(d, v);
    default:
      return CheckImages(d, v);
  }
}

// The fields after weight_decay: Adam's betas and eps, SGD's Nesterov, the
// no-decay group. (Momentum and the kind were checked before.)
absl::Status CheckOptimizerExtras(const v1::OptimizerSpec& o) {
  const bool adam = o.kind() == v1::OPTIMIZER_KIND_ADAM ||
                    o.kind() == v1::OPTIMIZER_KIND_ADAMW;
  const std::string kind = v1::OptimizerKind_Name(o.kind());
  for (const auto& [field, has, value] :
       {std::make_tuple("optimizer.beta1", o.has_beta1(), o.beta1()),
        std::make_tuple("optimizer.beta2", o.has_beta2(), o.beta2()),
        std::make_tuple("optimizer.eps", o.has_eps(), o.eps())}) {
    if (!has) continue;
    if (!adam) {
      return Invalid(field,
                     "is only valid with optimizer.kind OPTIMIZER_KIND_ADAM "
                     "or OPTIMIZER_KIND_ADAMW",
                     absl::StrCat(value, " with ", kind));
    }
    const bool eps = absl::EndsWith(field, "eps");
    // Comparisons are written so that NaN fails them.
    if (eps && !(value > 0 && value <= 1)) {
      return Invalid(field, "must be in (0, 1]", absl::StrCat(value));
    }
    if (!eps && !(value >= 0 && value < 1)) {
      return Invalid(field, "must be in [0, 1)", absl::StrCat(value));
    }
  }
  if (o.nesterov()) {
    if (o.kind() != v1::OPTIMIZER_KIND_SGD) {
      return Invalid("optimizer.nesterov",
                     "is only valid with optimizer.kind OPTIMIZER_KIND_SGD",
                     absl::StrCat("true with ", kind));
    }
    if (!(o.momentum() > 0)) {
      return Invalid("optimizer.nesterov", "requires optimizer.momentum > 0",
                     absl::StrCat("true with momentum ", o.momentum()));
    }
  }
  if (o.no_decay_bias_and_norm() && !(o.weight_decay() > 0)) {
    // Without decay there is nothing to leave out: the setting would be
    // silently ignored.
    return Invalid("optimizer.no_decay_bias_and_norm",
                   "requires optimizer.weight_decay > 0",
                   absl::StrCat("true with weight_decay ", o.weight_decay()));
  }
  return absl::OkStatus();
}

// Crops are of images: token windows have none. Whether an NPY input is an
// image ([C, H, W] or [H, W]) the worker sees when it opens the files.
void CheckAugmentation(const v1::DatasetSpec& d, SpecViolations* v) {
  constexpr int64_t kMaxCropPadding = 64;
  const v1::ImageAugmentation& a = d.augmentation();
  if (a.random_crop_padding() == 0 && !a.horizontal_flip()) return;
  if (d.format() == v1::DATASET_FORMAT_TOKENS) {
    v->Check(Invalid(
        "dataset.augmentation", "is for images, not DATASET_FORMAT_TOKENS",
        absl::StrCat("random_crop_padding ", a.random_crop_padding(),
                     ", horizontal_flip ", a.horizontal_flip())));
    return;
  }
  if (IsImageFormat(d.format()) && a.random_crop_padding() != 0) {
    v->Check(Invalid("dataset.augmentation.random_crop_padding",
                     "must be 0 with the image formats (their training crop "
                     "is dataset.image's RandomResizedCrop)",
                     absl::StrCat(a.random_crop_padding())));
    return;
  }
  v->Check(InRange("dataset.augmentation.random_crop_padding",
                   a.random_crop_padding(), 0, kMaxCropPadding));
}

// The loader's settings, for every format.
void CheckLoader(const v1::DatasetSpec& d, SpecViolations* v) {
  v->Check(InRange("dataset.loader_threads", d.loader_threads(), 0,
                   kMaxLoaderThreads));
  v->Check(InRange("dataset.prefetch_batches", d.prefetch_batches(), 0,
                   kMaxPrefetchBatches));
}

void CheckDataset(const v1::JobSpec& spec, SpecViolations* v) {
  const v1::DatasetSpec& d = spec.dataset();
  // Which fields belong depends on the format.
  if (!v->Check(DefinedEnum("dataset.format", v1::DatasetFormat_descriptor(),
                            d.format(), /*allow_unspecified=*/false))) {
    return;
  }
  const int first_own = FirstOwnField(d.format());
  CheckForeignFields(d, 0, first_own, v);
  CheckOwnFields(d, v);
  CheckForeignFields(d, first_own, 1 << 29, v);
  CheckAugmentation(d, v);
  CheckLoader(d, v);
}

absl::Status CheckLearningRate(double lr) {
  // Comparisons are written so that NaN fails them.
  if (!(lr > 0) || !std::isfinite(lr)) {
    return Invalid("optimizer.learning_rate", "must be > 0 and finite",
                   absl::StrCat(lr));
  }
  if (lr > kMaxLearningRate) {
    return Invalid("optimizer.learning_rate",
                   absl::StrCat("must be <= ", kMaxLearningRate),
                   absl::StrCat(lr));
  }
  return absl::OkStatus();
}

absl::Status CheckMomentum(const v1::OptimizerSpec& o) {
  const double momentum = o.momentum();
  if (o.kind() != v1::OPTIMIZER_KIND_SGD) {
    if (momentum == 0) return absl::OkStatus();
    return Invalid(
        "optimizer.momentum",
        "is only valid with optimizer.kind OPTIMIZER_KIND_SGD",
        absl::StrCat(momentum, " with ", v1::OptimizerKind_Name(o.kind())));
  }
  if (momentum >= 0 && momentum < 1) return absl::OkStatus();
  return Invalid("optimizer.momentum", "must be in [0, 1)",
                 absl::StrCat(momentum));
}

void CheckOptimizer(const v1::JobSpec& spec, SpecViolations* v) {
  const v1::OptimizerSpec& o = spec.optimizer();
  const bool kind_set =
      v->Check(DefinedEnum("optimizer.kind", v1::OptimizerKind_descriptor(),
                           o.kind(), /*allow_unspecified=*/false));
  v->Check(CheckLearningRate(o.learning_rate()));
  // Whether momentum, betas, eps and Nesterov are allowed depends on the
  // kind.
  if (kind_set) {
    v->Check(CheckMomentum(o));
    v->Check(CheckOptimizerExtras(o));
  }
  const double wd = o.weight_decay();
  if (!(wd >= 0 && wd <= 1)) {
    v->Check(Invalid("optimizer.weight_decay", "must be finite and in [0, 1]",
                     absl::StrCat(wd)));
  }
}

void CheckTraining(const v1::JobSpec& spec, SpecViolations* v) {
  v->Check(InRange("epochs", spec.epochs(), 1, kMaxEpochs));
  v->Check(InRange("batch_size", spec.batch_size(), 1, kMaxBatchSize));
}

void CheckWorkers(const v1::JobSpec& spec, SpecViolations* v) {
  const bool min_ok = spec.min_workers() >= 1;
  if (!min_ok) {
    v->Check(Invalid("min_workers", "must be >= 1",
                     absl::StrCat(spec.min_workers())));
  }
  // Compared with min_workers only when that is valid itself.
  if (min_ok && spec.max_workers() < spec.min_workers()) {
    v->Check(
        Invalid("max_workers", "must be >= min_workers",
                absl::StrCat(spec.max_workers(), " < ", spec.min_workers())));
  } else if (spec.max_workers() > kMaxWorkers) {
    v->Check(Invalid("max_workers", absl::StrCat("must be <= ", kMaxWorkers),
                     absl::StrCat(spec.max_workers())));
  }
  // seed: every value is fine.
}

void CheckCheckpoints(const v1::JobSpec& spec, SpecViolations* v) {
  const std::string& dir = spec.checkpoint_dir();
  v->Check(CheckPath("checkpoint_dir", dir, "", PathUse::kWrite));
  const int32_t every = spec.checkpoint_every_steps();
  if (every < 0) {
    v->Check(
        Invalid("checkpoint_every_steps", "must be >= 0", absl::StrCat(every)));
  } else if (every > 0 && dir.empty()) {
    v->Check(Invalid("checkpoint_every_steps", "> 0 requires checkpoint_dir",
                     absl::StrCat(every, " with empty checkpoint_dir")));
  }
}

void CheckRuntime(const v1::JobSpec& spec, SpecViolations* v) {
  v->Check(InRange("progress_every_steps", spec.progress_every_steps(), 0,
                   kMaxProgressEverySteps));
  v->Check(InRange("progress_min_interval_ms", spec.progress_min_interval_ms(),
                   0, kMaxProgressMinIntervalMs));
  v->Check(InRange("max_restarts", spec.max_restarts(), 0, kMaxRestarts));
  v->Check(DefinedEnum("device", v1::DeviceKind_descriptor(), spec.device(),
                       /*allow_unspecified=*/true));
  v->Check(InRange("rendezvous_last_call_ms", spec.rendezvous_last_call_ms(), 0,
                   kMaxLastCallMs));
  v->Check(InRange("rendezvous_timeout_ms", spec.rendezvous_timeout_ms(), 0,
                   kMaxRendezvousTimeoutMs));
  if (spec.resume() && spec.checkpoint_dir().empty()) {
    v->Check(Invalid("resume", "requires checkpoint_dir",
                     "true with empty checkpoint_dir"));
  }
  v->Check(InRange("gradient_accumulation_steps",
                   spec.gradient_accumulation_steps(), 0,
                   kMaxGradientAccumulation));
  // Whether the device can do bf16 is the worker's to say (a CUDA GPU
  // before compute capability 8.0 cannot): it fails the job at start.
  v->Check(DefinedEnum("precision", v1::Precision_descriptor(),
                       spec.precision(), /*allow_unspecified=*/true));
}

// Buckets below 1 KiB would mean one all-reduce per few floats; above 1 GiB
// one bucket would hold any model we train.
void CheckDdp(const v1::JobSpec& spec, SpecViolations* v) {
  constexpr int64_t kMinBucket = 1 << 10, kMaxBucket = int64_t{1} << 30;
  for (const auto& [field, value] :
       {std::pair<const char*, int64_t>{"ddp.bucket_cap_bytes",
                                        spec.ddp().bucket_cap_bytes()},
        {"ddp.first_bucket_bytes", spec.ddp().first_bucket_bytes()}}) {
    if (value == 0) continue;  // The default.
    v->Check(InRange(field, value, kMinBucket, kMaxBucket));
  }
  // Each lane is a full mesh (N-1 TCP connections) and a thread: a few hide
  // the latency of a ring; more only cost sockets and threads.
  v->Check(InRange("ddp.buckets_in_flight", spec.ddp().buckets_in_flight(), 0,
                   kMaxBucketsInFlight));
  v->Check(DefinedEnum("ddp.cpu_transport", v1::CpuTransport_descriptor(),
                       spec.ddp().cpu_transport(),
                       /*allow_unspecified=*/true));
  // Every transport and device can all-reduce both 16-bit types (Gloo and
  // shared memory with their own reduction, NCCL natively), so only the
  // value itself can be wrong.
  v->Check(DefinedEnum("ddp.gradient_compression",
                       v1::GradientCompression_descriptor(),
                       spec.ddp().gradient_compression(),
                       /*allow_unspecified=*/true));
}

void CheckTimeline(const v1::JobSpec& spec, SpecViolations* v) {
  const std::string& dir = spec.timeline_dir();
  v->Check(CheckPath("timeline_dir", dir, "", PathUse::kWrite));
  if (!v->Check(InRange("timeline_steps", spec.timeline_steps(), 0,
                        kMaxTimelineSteps))) {
    return;
  }
  if (spec.timeline_steps() > 0 && dir.empty()) {
    v->Check(Invalid(
        "timeline_steps", "> 0 requires timeline_dir",
        absl::StrCat(spec.timeline_steps(), " with empty timeline_dir")));
  }
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

// Which models can learn the task.
absl::Status CheckTaskModel(const v1::JobSpec& spec) {
  const v1::ModelArch arch = spec.model().arch();
  if (arch == v1::MODEL_ARCH_TORCHSCRIPT ||
      EffectiveKind(spec.task()) == v1::TASK_KIND_CLASSIFICATION) {
    return absl::OkStatus();
  }
  return Invalid("task.kind",
                 absl::StrCat("must be TASK_KIND_CLASSIFICATION with ",
                              v1::ModelArch_Name(arch),
                              ": built-in models classify images; use a "
                              "TorchScript model for other tasks"),
                 v1::TaskKind_Name(spec.task().kind()));
}

// Which losses fit the task; LOSS_KIND_MODEL needs a model that computes
// one, which is checked only when `arch_set`.
absl::Status CheckTaskLoss(const v1::JobSpec& spec, bool arch_set) {
  const v1::TaskSpec& t = spec.task();
  const v1::ModelArch arch = spec.model().arch();
  if (t.loss() == v1::LOSS_KIND_MODEL) {
    if (!arch_set || arch == v1::MODEL_ARCH_TORCHSCRIPT) {
      return absl::OkStatus();
    }
    return Invalid(
        "task.loss",
        "LOSS_KIND_MODEL requires model.arch "
        "MODEL_ARCH_TORCHSCRIPT (only a TorchScript model computes "
        "its own loss)",
        absl::StrCat("LOSS_KIND_MODEL with ", v1::ModelArch_Name(arch)));
  }
  const v1::TaskKind kind = EffectiveKind(t);
  const bool regression = kind == v1::TASK_KIND_REGRESSION;
  const bool cross_entropy = EffectiveLoss(t) == v1::LOSS_KIND_CROSS_ENTROPY;
  if (regression != cross_entropy) return absl::OkStatus();
  return Invalid("task.loss",
                 regression
                     ? "must be LOSS_KIND_MSE, LOSS_KIND_L1 or LOSS_KIND_MODEL "
                       "for TASK_KIND_REGRESSION"
                     : absl::StrCat("must be LOSS_KIND_CROSS_ENTROPY or "
                                    "LOSS_KIND_MODEL for ",
                                    v1::TaskKind_Name(kind)),
                 v1::LossKind_Name(t.loss()));
}

absl::Status CheckLabelSmoothing(const v1::TaskSpec& t) {
  const double ls = t.label_smoothing();
  if (!(ls >= 0 && ls < 1)) {  // NaN fails too.
    return Invalid("task.label_smoothing", "must be in [0, 1)",
                   absl::StrCat(ls));
  }
  const v1::LossKind loss = EffectiveLoss(t);
  if (ls != 0 && loss != v1::LOSS_KIND_CROSS_ENTROPY) {
    return Invalid("task.label_smoothing", "is only valid with cross-entropy",
                   absl::StrCat(ls, " with ", v1::LossKind_Name(loss)));
  }
  return absl::OkStatus();
}

// Regression has neither classes nor a top k: a value would be ignored.
absl::Status NotWithRegression(const v1::TaskSpec& t, absl::string_view field,
                               int64_t value) {
  if (value == 0 || EffectiveKind(t) != v1::TASK_KIND_REGRESSION) {
    return absl::OkStatus();
  }
  return Invalid(field, "is not valid with TASK_KIND_REGRESSION",
                 absl::StrCat(value));
}

absl::Status CheckTopK(const v1::TaskSpec& t) {
  if (absl::Status s = InRange("task.top_k", t.top_k(), 0, kMaxTopK); !s.ok()) {
    return s;
  }
  if (absl::Status s = NotWithRegression(t, "task.top_k", t.top_k()); !s.ok()) {
    return s;
  }
  // Against num_classes only when that is in range itself.
  if (t.top_k() > 0 && t.num_classes() > 0 && t.num_classes() <= kMaxClasses &&
      t.top_k() >= t.num_classes()) {
    return Invalid(
        "task.top_k", "must be less than task.num_classes",
        absl::StrCat(t.top_k(), " with ", t.num_classes(), " classes"));
  }
  return absl::OkStatus();
}

// The knobs of the cross-entropy loss and of classification metrics.
void CheckTaskOptions(const v1::TaskSpec& t, SpecViolations* v) {
  const v1::LossKind loss = EffectiveLoss(t);
  const bool mse_or_l1 = loss == v1::LOSS_KIND_MSE || loss == v1::LOSS_KIND_L1;
  if (t.has_ignore_index() && mse_or_l1) {
    v->Check(Invalid(
        "task.ignore_index", "is only valid with cross-entropy",
        absl::StrCat(t.ignore_index(), " with ", v1::LossKind_Name(loss))));
  }
  v->Check(CheckLabelSmoothing(t));
  v->Check(CheckTopK(t));
  if (v->Check(InRange("task.num_classes", t.num_classes(), 0, kMaxClasses))) {
    v->Check(NotWithRegression(t, "task.num_classes", t.num_classes()));
  }
}

void CheckTask(const v1::JobSpec& spec, SpecViolations* v) {
  const v1::TaskSpec& t = spec.task();
  // The task's other rules depend on its kind and loss.
  const bool kind_ok =
      v->Check(DefinedEnum("task.kind", v1::TaskKind_descriptor(), t.kind(),
                           /*allow_unspecified=*/true));
  const bool loss_ok =
      v->Check(DefinedEnum("task.loss", v1::LossKind_descriptor(), t.loss(),
                           /*allow_unspecified=*/true));
  if (!kind_ok || !loss_ok) return;
  const bool arch_set = ArchIsSet(spec.model());
  if (arch_set) v->Check(CheckTaskModel(spec));
  v->Check(CheckTaskLoss(spec, arch_set));
  CheckTaskOptions(t, v);
}

// Rank 0 writes these files after training: a bad path must fail now, not
// after the whole run.
absl::Status CheckExportPath(absl::string_view field, const std::string& path) {
  if (absl::Status s = CheckPath(field, path, "", PathUse::kWrite); !s.ok()) {
    return s;
  }
  if (absl::EndsWith(path, "/")) {
    return Invalid(field, "must name a file, not a directory",
                   QuoteForError(path));
  }
  return absl::OkStatus();
}

void CheckExport(const v1::JobSpec& spec, SpecViolations* v) {
  const v1::ExportSpec& e = spec.export_();
  const bool torchscript_ok = v->Check(
      CheckExportPath("export.torchscript_path", e.torchscript_path()));
  const bool safetensors_ok = v->Check(
      CheckExportPath("export.safetensors_path", e.safetensors_path()));
  if (torchscript_ok && safetensors_ok && !e.safetensors_path().empty() &&
      e.safetensors_path() == e.torchscript_path()) {
    v->Check(Invalid("export.safetensors_path",
                     "must differ from export.torchscript_path",
                     QuoteForError(e.safetensors_path())));
  }
  // Written from the first progress report on: a bad directory must fail
  // now, as checkpoint_dir does.
  v->Check(CheckPath("export.tensorboard_dir", e.tensorboard_dir(), "",
                     PathUse::kWrite));
}

// STEP's own fields: step_size (required) and gamma.
absl::Status CheckStepSchedule(const v1::LrSchedule& l, bool step) {
  if (!step) {
    for (const auto& [field, set, got] :
         {std::make_tuple("lr_schedule.step_size", l.step_size() != 0,
                          absl::StrCat(l.step_size())),
          std::make_tuple("lr_schedule.gamma", l.gamma() != 0,
                          absl::StrCat(l.gamma()))}) {
      if (!set) continue;
      return Invalid(
          field,
          "is only valid with lr_schedule.kind "
          "LR_SCHEDULE_KIND_STEP",
          absl::StrCat(got, " with ", v1::LrScheduleKind_Name(l.kind())));
    }
    return absl::OkStatus();
  }
  if (absl::Status s =
          InRange("lr_schedule.step_size", l.step_size(), 1, kMaxScheduleSteps);
      !s.ok()) {
    return s;
  }
  // 0 means torch's 0.1; NaN fails the comparison.
  if (l.gamma() != 0 && !(l.gamma() > 0 && l.gamma() < 1)) {
    return Invalid("lr_schedule.gamma", "must be in (0, 1) (0 means 0.1)",
                   absl::StrCat(l.gamma()));
  }
  return absl::OkStatus();
}

// lr_schedule: the kind's fields only, the floor under the peak, an
// explicit horizon past the warmup.
absl::Status CheckLrSchedule(const v1::JobSpec& spec) {
  const v1::LrSchedule& l = spec.lr_schedule();
  if (absl::Status s =
          DefinedEnum("lr_schedule.kind", v1::LrScheduleKind_descriptor(),
                      l.kind(), /*allow_unspecified=*/true);
      !s.ok()) {
    return s;
  }
  const bool constant = l.kind() == v1::LR_SCHEDULE_KIND_UNSPECIFIED ||
                        l.kind() == v1::LR_SCHEDULE_KIND_CONSTANT;
  const bool decays_to_horizon = l.kind() == v1::LR_SCHEDULE_KIND_COSINE ||
                                 l.kind() == v1::LR_SCHEDULE_KIND_LINEAR;
  if (absl::Status s = InRange("lr_schedule.warmup_steps", l.warmup_steps(), 0,
                               kMaxScheduleSteps);
      !s.ok()) {
    return s;
  }
  const double lr = spec.optimizer().learning_rate();
  if (constant && l.min_lr() != 0) {
    return Invalid(
        "lr_schedule.min_lr",
        "is only valid with a decaying lr_schedule.kind (STEP, "
        "COSINE or LINEAR)",
        absl::StrCat(l.min_lr(), " with ", v1::LrScheduleKind_Name(l.kind())));
  }
  if (!(l.min_lr() >= 0 && l.min_lr() <= lr)) {  // NaN fails too.
    return Invalid("lr_schedule.min_lr",
                   "must be in [0, optimizer.learning_rate]",
                   absl::StrCat(l.min_lr(), " with learning_rate ", lr));
  }
  if (!decays_to_horizon && l.decay_steps() != 0) {
    return Invalid(
        "lr_schedule.decay_steps",
        "is only valid with lr_schedule.kind LR_SCHEDULE_KIND_COSINE "
        "or LR_SCHEDULE_KIND_LINEAR",
        absl::StrCat(l.decay_steps(), " with ",
                     v1::LrScheduleKind_Name(l.kind())));
  }
  if (absl::Status s = InRange("lr_schedule.decay_steps", l.decay_steps(), 0,
                               kMaxScheduleSteps);
      !s.ok()) {
    return s;
  }
  if (l.decay_steps() != 0 && l.decay_steps() <= l.warmup_steps()) {
    return Invalid("lr_schedule.decay_steps",
                   "must be > lr_schedule.warmup_steps (the warmup must end "
                   "before the decay horizon)",
                   absl::StrCat(l.decay_steps(), " <= ", l.warmup_steps()));
  }
  return CheckStepSchedule(l, l.kind() == v1::LR_SCHEDULE_KIND_STEP);
}

absl::Status CheckClipGradNorm(const v1::JobSpec& spec) {
  const double c = spec.clip_grad_norm();
  if (!(c >= 0) || !std::isfinite(c)) {
    return Invalid("clip_grad_norm", "must be >= 0 and finite (0: no clipping)",
                   absl::StrCat(c));
  }
  return absl::OkStatus();
}

void CheckRecipe(const v1::JobSpec& spec, SpecViolations* v) {
  // The schedule's floor is checked against the learning rate: it waits for
  // a valid one, so that one mistake is not reported twice.
  if (CheckLearningRate(spec.optimizer().learning_rate()).ok()) {
    v->Check(CheckLrSchedule(spec));
  }
  v->Check(CheckClipGradNorm(spec));
}

}  // namespace

// Absolute, so every worker means the same place whatever its working
// directory; normalized (no "", "." or ".." component but a trailing "/"),
// so the path cannot step out of a mount it names and two spellings of one
// place compare equal; no NUL, which would end it early in open().
bool IsCleanAbsolutePath(absl::string_view path) {
  if (!absl::StartsWith(path, "/")) return false;
  if (path.find('\0') != absl::string_view::npos) return false;
  if (path == "/") return true;
  std::vector<absl::string_view> parts = absl::StrSplit(path.substr(1), '/');
  if (parts.back().empty()) parts.pop_back();  // One trailing "/".
  for (absl::string_view part : parts) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

absl::Status ValidateJobSpec(const v1::JobSpec& spec) {
  // Every group runs, each rule of an independent field too, so a spec with
  // several mistakes is answered with all of them; in proto field order, so
  // the lines follow a spec file written in that order.
  using Check = void (*)(const v1::JobSpec&, SpecViolations*);
  SpecViolations violations;
  for (Check check :
       {&CheckSpecSize, &CheckName, &CheckModel, &CheckDataset, &CheckOptimizer,
        &CheckTraining, &CheckWorkers, &CheckCheckpoints, &CheckRuntime,
        &CheckDdp, &CheckTimeline, &CheckTask, &CheckExport, &CheckRecipe}) {
    check(spec, &violations);
  }
  return violations.ToStatus();
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
  if (spec.lr_schedule().kind() == v1::LR_SCHEDULE_KIND_STEP &&
      spec.lr_schedule().gamma() == 0) {
    spec.mutable_lr_schedule()->set_gamma(0.1);
  }
  if (spec.model().arch() == v1::MODEL_ARCH_MLP &&
      spec.model().hidden_sizes_size() == 0) {
    spec.mutable_model()->add_hidden_sizes(256);
    spec.mutable_model()->add_hidden_sizes(128);
  }
  return spec;
}

}  // namespace ringleader
