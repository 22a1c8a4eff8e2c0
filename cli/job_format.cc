#include "cli/job_format.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/table.h"
#include "common/enum_names.h"
#include "common/eval_metrics.h"
#include "common/job_over.h"
#include "common/waiting_for_line.h"

namespace ringleader::cli {
namespace {

std::string FormatWhen(int64_t unix_ms, absl::Time now) {
  if (unix_ms <= 0) return "-";
  const absl::Time t = absl::FromUnixMillis(unix_ms);
  return absl::StrCat(
      absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone()), " (",
      HumanDuration(now - t), " ago)");
}

std::string DescribeModel(const v1::ModelSpec& m) {
  std::string s = EnumValueName(m.arch());
  if (m.hidden_sizes_size() > 0) {
    absl::StrAppend(&s, " ", absl::StrJoin(m.hidden_sizes(), ","));
  }
  if (!m.torchscript_path().empty()) {
    absl::StrAppend(&s, " ", m.torchscript_path());
  }
  return s;
}

// "train /d/x.npy,/d/m.npy -> /d/y.npy".
std::string DescribeSplit(absl::string_view name, const v1::NpySplit& split) {
  return absl::StrCat(name, " ", absl::StrJoin(split.inputs(), ","), " -> ",
                      split.targets());
}

std::string DescribeDataset(const v1::DatasetSpec& d) {
  std::string s = EnumValueName(d.format());
  if (!d.path().empty()) absl::StrAppend(&s, " ", d.path());
  if (d.format() == v1::DATASET_FORMAT_SYNTHETIC) {
    absl::StrAppend(&s, " ", d.synthetic_train_size(), " train / ",
                    d.synthetic_test_size(), " test");
  }
  if (d.format() == v1::DATASET_FORMAT_NPY) {
    absl::StrAppend(&s, " ", DescribeSplit("train", d.train()));
    if (!d.test().inputs().empty()) {
      absl::StrAppend(&s, "; ", DescribeSplit("test", d.test()));
    }
  }
  if (d.format() == v1::DATASET_FORMAT_TOKENS) {
    absl::StrAppend(&s, " train ", d.train_tokens());
    if (!d.test_tokens().empty())
      absl::StrAppend(&s, ", test ", d.test_tokens());
    if (d.token_dtype() != v1::TOKEN_DTYPE_UNSPECIFIED) {
      absl::StrAppend(&s, ", ", EnumValueName(d.token_dtype()));
    }
    absl::StrAppend(&s, ", block ", d.block_size());
  }
  if (d.format() == v1::DATASET_FORMAT_IMAGE_FOLDER) {
    absl::StrAppend(&s, " train ", d.train_root());
    if (!d.test_root().empty()) absl::StrAppend(&s, ", test ", d.test_root());
  }
  if (d.format() == v1::DATASET_FORMAT_TAR_SHARDS) {
    absl::StrAppend(&s, " train ", absl::StrJoin(d.train_shards(), ","));
    if (!d.test_shards().empty()) {
      absl::StrAppend(&s, ", test ", absl::StrJoin(d.test_shards(), ","));
    }
  }
  if (d.format() == v1::DATASET_FORMAT_IMAGE_FOLDER ||
      d.format() == v1::DATASET_FORMAT_TAR_SHARDS) {
    absl::StrAppend(&s, ", ", d.image().size() == 0 ? 224 : d.image().size(),
                    "px");
  }
  if (d.shuffle()) absl::StrAppend(&s, ", shuffled");
  if (d.drop_last()) absl::StrAppend(&s, ", drop last");
  return s;
}

// "language_model, loss model, ignore_index -1": what was set.
std::string DescribeTask(const v1::TaskSpec& t) {
  std::string s = EnumValueName(t.kind());
  if (t.loss() != v1::LOSS_KIND_UNSPECIFIED) {
    absl::StrAppend(&s, ", loss ", EnumValueName(t.loss()));
  }
  if (t.has_ignore_index()) {
    absl::StrAppend(&s, ", ignore_index ", t.ignore_index());
  }
  if (t.label_smoothing() != 0) {
    absl::StrAppend(&s, ", label smoothing ", t.label_smoothing());
  }
  if (t.top_k() != 0) absl::StrAppend(&s, ", top ", t.top_k());
  if (t.num_classes() != 0) {
    absl::StrAppend(&s, ", ", t.num_classes(), " classes");
  }
  return s;
}

std::string DescribeExport(const v1::ExportSpec& e) {
  std::vector<std::string> parts;
  if (!e.torchscript_path().empty()) {
    parts.push_back(absl::StrCat("torchscript ", e.torchscript_path()));
  }
  if (!e.safetensors_path().empty()) {
    parts.push_back(absl::StrCat("safetensors ", e.safetensors_path()));
  }
  return absl::StrJoin(parts, ", ");
}

// The last evaluations, oldest first, as "EVALUATIONS" rows: a job of many
// epochs keeps its detail readable; JSON has them all.
void AddEvaluations(const v1::JobProgress& p,
                    std::vector<std::pair<std::string, std::string>>* kv) {
  constexpr int kShown = 10;
  const int n = p.evaluations_size();
  const int first = std::max(0, n - kShown);
  std::string key = "EVALUATIONS";
  if (first > 0) {
    kv->emplace_back(
        key, absl::StrCat("(", first, " earlier; --output=json has all)"));
    key.clear();
  }
  for (int i = first; i < n; ++i) {
    kv->emplace_back(key, FormatEvaluation(p.evaluations(i)));
    key.clear();
  }
}

std::string DescribeOptimizer(const v1::OptimizerSpec& o) {
  std::string s = EnumValueName(o.kind());
  absl::StrAppend(&s, " lr ", o.learning_rate());
  if (o.momentum() != 0) absl::StrAppend(&s, " momentum ", o.momentum());
  if (o.nesterov()) absl::StrAppend(&s, " nesterov");
  if (o.has_beta1() || o.has_beta2()) {
    absl::StrAppend(&s, " betas (", o.has_beta1() ? o.beta1() : 0.9, ", ",
                    o.has_beta2() ? o.beta2() : 0.999, ")");
  }
  if (o.has_eps()) absl::StrAppend(&s, " eps ", o.eps());
  if (o.weight_decay() != 0) {
    absl::StrAppend(&s, " weight decay ", o.weight_decay());
    if (o.no_decay_bias_and_norm())
      absl::StrAppend(&s, " (not on biases, norms)");
  }
  return s;
}

// "cosine, warmup 100, min lr 1e-05, to step 5000; clip grad norm 1": the
// schedule and clipping as set; empty when neither is.
std::string DescribeSchedule(const v1::JobSpec& spec) {
  const v1::LrSchedule& l = spec.lr_schedule();
  std::vector<std::string> parts;
  if (spec.has_lr_schedule()) {
    std::string s = EnumValueName(l.kind());
    if (l.kind() == v1::LR_SCHEDULE_KIND_UNSPECIFIED) s = "constant";
    if (l.warmup_steps() != 0)
      absl::StrAppend(&s, ", warmup ", l.warmup_steps());
    if (l.step_size() != 0) {
      absl::StrAppend(&s, ", x", l.gamma() == 0 ? 0.1 : l.gamma(), " every ",
                      l.step_size());
    }
    if (l.min_lr() != 0) absl::StrAppend(&s, ", min lr ", l.min_lr());
    if (l.decay_steps() != 0) {
      absl::StrAppend(&s, ", to step ", l.decay_steps());
    }
    parts.push_back(s);
  }
  if (spec.clip_grad_norm() != 0) {
    parts.push_back(absl::StrCat("clip grad norm ", spec.clip_grad_norm()));
  }
  return absl::StrJoin(parts, "; ");
}

}  // namespace

// Upper case, as the state columns have always shown them.
std::string JobStateName(v1::JobState state) {
  return absl::AsciiStrToUpper(EnumValueName(state));
}

std::string WorkerStateName(v1::WorkerState state) {
  return absl::AsciiStrToUpper(EnumValueName(state));
}

absl::StatusOr<std::vector<v1::JobState>> ParseJobStates(
    absl::string_view text) {
  std::vector<v1::JobState> states;
  for (absl::string_view item :
       absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    const std::optional<int> state = ParseEnumValueName(
        v1::JobState_descriptor(), absl::StripAsciiWhitespace(item));
    if (!state.has_value() || *state == v1::JOB_STATE_UNSPECIFIED) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--state: unknown job state \"", item, "\" (one of ",
          absl::StrJoin(ChoosableEnumValueNames(v1::JobState_descriptor()),
                        ", "),
          ")"));
    }
    states.push_back(static_cast<v1::JobState>(*state));
  }
  return states;
}

std::string HumanDuration(absl::Duration d) {
  if (d == absl::InfiniteDuration()) return "-";
  const int64_t s = d < absl::ZeroDuration() ? 0 : absl::ToInt64Seconds(d);
  if (s < 60) return absl::StrCat(s, "s");
  if (s < 3600) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  if (s < 86400) return absl::StrFormat("%dh%02dm", s / 3600, s % 3600 / 60);
  return absl::StrFormat("%dd%02dh", s / 86400, s % 86400 / 3600);
}

std::string FormatStepTotal(const v1::JobProgress& p) {
  if (p.step() == 0 && p.total_steps() == 0) return "-";
  if (p.total_steps() <= 0) return absl::StrCat(p.step(), "/?");
  return absl::StrCat(p.step(), "/", p.total_steps());
}

std::string FormatLoss(const v1::JobProgress& p) {
  if (p.step() == 0 && p.loss() == 0) return "-";
  return absl::StrFormat("%.4f", p.loss());
}

std::string FormatGradNorm(const v1::JobProgress& p) {
  if (p.grad_norm() == 0) return "-";
  return absl::StrFormat("%.4g", p.grad_norm());
}

// "10: T-shirt, Trouser, ..." (the first few).
std::string FormatClassNames(const v1::JobProgress& p) {
  constexpr int kShown = 8;
  std::vector<std::string> names(
      p.class_names().begin(),
      p.class_names().begin() + std::min(kShown, p.class_names_size()));
  return absl::StrCat(p.class_names_size(), ": ", absl::StrJoin(names, ", "),
                      p.class_names_size() > kShown ? ", ..." : "");
}

std::string FormatSamplesPerSec(double samples_per_sec) {
  if (!(samples_per_sec > 0)) return "-";
  return absl::StrFormat("%.1f", samples_per_sec);
}

std::string FormatEpoch(const v1::Job& job) {
  const v1::JobProgress& p = job.progress();
  if (p.step() == 0 && p.epoch() == 0) return "-";
  return absl::StrCat(p.epoch() + 1, "/", job.spec().epochs());
}

std::string FormatJobMessage(absl::string_view message, size_t max_bytes) {
  message = absl::StripLeadingAsciiWhitespace(message);
  const size_t eol = message.find_first_of("\r\n");
  bool cut = false;
  if (eol != absl::string_view::npos) {
    cut = !absl::StripAsciiWhitespace(message.substr(eol)).empty();
    message = message.substr(0, eol);
  }
  if (message.size() > max_bytes) {
    size_t end = max_bytes;
    // Back to the start of a UTF-8 character (continuation bytes are
    // 10xxxxxx), so the cut never leaves half of one.
    while (end > 0 &&
           (static_cast<unsigned char>(message[end]) & 0xc0) == 0x80) {
      --end;
    }
    message = message.substr(0, end);
    cut = true;
  }
  std::string line(absl::StripTrailingAsciiWhitespace(message));
  // Escape sequences and other control bytes from a worker's output must
  // not reach the terminal.
  for (char& c : line) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  if (cut) line += "...";
  return line;
}

std::string FormatMetricValue(const v1::Metric& metric) {
  const double v = metric.value();
  if (IsAccuracyMetric(metric.name())) {
    return absl::StrFormat("%.2f%%", 100.0 * v);
  }
  // %g would switch to an exponent at 10^4 (a perplexity of 50257 is
  // clearer whole); beyond 10^15 the exponent is the readable form.
  if (std::fabs(v) >= 1e4 && std::fabs(v) < 1e15) {
    return absl::StrFormat("%.0f", v);
  }
  return absl::StrFormat("%#.4g", v);
}

std::string FormatTestMetrics(
    const google::protobuf::RepeatedPtrField<v1::Metric>& metrics,
    double legacy_accuracy) {
  if (metrics.empty()) {
    return absl::StrFormat("test accuracy %.2f%%", 100.0 * legacy_accuracy);
  }
  std::vector<std::string> parts;
  for (const v1::Metric& m : metrics) {
    parts.push_back(absl::StrCat(m.name(), " ", FormatMetricValue(m)));
  }
  return absl::StrCat("test ", absl::StrJoin(parts, ", "));
}

std::string FormatFinalMetrics(const v1::JobProgress& p) {
  return absl::StrCat(
      absl::StrFormat("train loss %.4f, ", p.final_train_loss()),
      FormatTestMetrics(p.test_metrics(), p.test_accuracy()));
}

std::string FormatEvaluation(const v1::EpochEvaluation& e) {
  return absl::StrCat("epoch ", e.epoch(), ": ",
                      FormatTestMetrics(e.metrics(), e.test_accuracy()));
}

std::string FormatJobsTable(const std::vector<v1::Job>& jobs) {
  std::vector<std::vector<std::string>> rows;
  for (const v1::Job& job : jobs) {
    rows.push_back({job.job_id(), JobStateName(job.state()),
                    absl::StrCat(job.generation()),
                    absl::StrCat(job.world_size()), FormatEpoch(job),
                    FormatStepTotal(job.progress()), FormatLoss(job.progress()),
                    FormatSamplesPerSec(job.progress().samples_per_sec()),
                    absl::StrCat(job.restarts())});
  }
  return FormatTable({"ID", "STATE", "GEN", "WORKERS", "EPOCH", "STEP/TOTAL",
                      "LOSS", "SAMPLES/S", "RESTARTS"},
                     rows);
}

std::string FormatJoined(const v1::JobProgress& p) {
  std::vector<std::string> parts;
  for (const v1::RankProgress& r : p.ranks()) {
    if (r.join_to_first_step_ms() <= 0) continue;
    parts.push_back(
        absl::StrFormat("rank %d first step %.1fs after its assignment",
                        r.rank(), r.join_to_first_step_ms() / 1000.0));
  }
  return absl::StrJoin(parts, "; ");
}

std::string FormatJobDetail(const v1::Job& job, absl::Time now) {
  const v1::JobSpec& spec = job.spec();
  const v1::JobProgress& p = job.progress();
  std::vector<std::pair<std::string, std::string>> kv;
  std::string state = JobStateName(job.state());
  if (!job.message().empty()) {
    absl::StrAppend(&state, " (", FormatJobMessage(job.message()), ")");
  }
  kv.emplace_back("ID", job.job_id());
  kv.emplace_back("NAME", spec.name());
  kv.emplace_back("STATE", state);
  // Ranks blocked in a collective past the threshold: whom they wait for.
  if (job.has_waiting_for()) kv.emplace_back("STALLED", WaitingForLine(job));
  kv.emplace_back("GENERATION", absl::StrCat(job.generation()));
  kv.emplace_back("WORKERS",
                  absl::StrCat(job.world_size(), " (min ", spec.min_workers(),
                               ", max ", spec.max_workers(), ")"));
  kv.emplace_back("RESTARTS", absl::StrCat(job.restarts(), " of ",
                                           spec.max_restarts(), " allowed"));
  kv.emplace_back("EPOCH", FormatEpoch(job));
  std::string step = FormatStepTotal(p);
  if (p.total_steps() > 0) {
    absl::StrAppend(&step, absl::StrFormat(" (%.1f%%)",
                                           100.0 * p.step() / p.total_steps()));
  }
  kv.emplace_back("STEP", step);
  kv.emplace_back("LOSS", FormatLoss(p));
  std::string norm = FormatGradNorm(p);
  if (spec.clip_grad_norm() > 0) {
    absl::StrAppend(&norm, " (clipped to ", spec.clip_grad_norm(), ")");
  }
  kv.emplace_back("GRAD NORM", norm);
  kv.emplace_back("SAMPLES/S", FormatSamplesPerSec(p.samples_per_sec()));
  if (spec.dataset().skip_corrupt() || p.skipped_samples() > 0) {
    kv.emplace_back("SKIPPED",
                    absl::StrCat(p.skipped_samples(),
                                 " unreadable samples (skip_corrupt)"));
  }
  if (p.class_names_size() > 0) {
    kv.emplace_back("CLASSES", FormatClassNames(p));
  }
  if (p.has_final_metrics()) kv.emplace_back("FINAL", FormatFinalMetrics(p));
  AddEvaluations(p, &kv);
  const std::string joined = FormatJoined(p);
  if (!joined.empty()) kv.emplace_back("JOINED", joined);
  const v1::CheckpointRecord& ck = job.last_checkpoint();
  if (ck.checkpoint_id() != 0) {
    kv.emplace_back(
        "CHECKPOINT",
        absl::StrCat("#", ck.checkpoint_id(), " at step ", ck.step(),
                     " (epoch ", ck.epoch() + 1, ") ", ck.path()));
  }
  kv.emplace_back("MODEL", DescribeModel(spec.model()));
  kv.emplace_back("DATASET", DescribeDataset(spec.dataset()));
  if (spec.has_task()) kv.emplace_back("TASK", DescribeTask(spec.task()));
  kv.emplace_back("OPTIMIZER", DescribeOptimizer(spec.optimizer()));
  const std::string schedule = DescribeSchedule(spec);
  if (!schedule.empty()) kv.emplace_back("SCHEDULE", schedule);
  kv.emplace_back("BATCH", absl::StrCat(spec.batch_size(), " per rank"));
  const std::string exports = DescribeExport(spec.export_());
  if (!exports.empty()) kv.emplace_back("EXPORT", exports);
  kv.emplace_back("CREATED", FormatWhen(job.create_time_ms(), now));
  kv.emplace_back("UPDATED", FormatWhen(job.update_time_ms(), now));
  return FormatKeyValues(kv);
}

std::string FormatWorkersTable(const std::vector<v1::WorkerInfo>& workers,
                               absl::Time now) {
  std::vector<std::vector<std::string>> rows;
  for (const v1::WorkerInfo& w : workers) {
    std::string age = "-";
    if (w.last_heartbeat_ms() > 0) {
      age = absl::StrCat(
          HumanDuration(now - absl::FromUnixMillis(w.last_heartbeat_ms())),
          " ago");
    }
    rows.push_back({w.worker_id(), w.hostname(), w.device(),
                    WorkerStateName(w.state()),
                    w.job_id().empty() ? "-" : w.job_id(), age});
  }
  return FormatTable({"ID", "HOST", "DEVICE", "STATE", "JOB", "LAST HEARTBEAT"},
                     rows);
}

}  // namespace ringleader::cli
