#include "common/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "absl/base/internal/raw_logging.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ringleader::metrics {
namespace {

void AtomicAdd(std::atomic<double>& a, double v) {
  double old = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(old, old + v, std::memory_order_relaxed)) {
  }
}

const char* TypeName(Type t) {
  switch (t) {
    case Type::kCounter:
      return "counter";
    case Type::kGauge:
      return "gauge";
    case Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

std::vector<double> CheckedBounds(std::vector<double> bounds) {
  if (!bounds.empty() && std::isinf(bounds.back()) && bounds.back() > 0) {
    bounds.pop_back();  // +Inf is implicit.
  }
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (std::isnan(bounds[i]) || (i > 0 && !(bounds[i - 1] < bounds[i]))) {
      ABSL_RAW_LOG(FATAL, "histogram buckets must be strictly increasing");
    }
  }
  return bounds;
}

}  // namespace

void Counter::Increment(double v) {
  if (!(v >= 0)) return;
  AtomicAdd(value_, v);
}

void Gauge::Add(double v) { AtomicAdd(value_, v); }

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(CheckedBounds(std::move(bounds))),
      counts_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) counts_[i] = 0;
}

void Histogram::Observe(double v) {
  // The first bound >= v; NaN goes to +Inf, as in the Go client.
  const size_t i =
      std::isnan(v) ? bounds_.size()
                    : static_cast<size_t>(
                          std::lower_bound(bounds_.begin(), bounds_.end(), v) -
                          bounds_.begin());
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(sum_, v);
}

Histogram::Snapshot Histogram::Snap() const {
  Snapshot s;
  s.bounds = bounds_;
  s.cumulative.resize(bounds_.size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    total += counts_[i].load(std::memory_order_relaxed);
    s.cumulative[i] = total;
  }
  s.count = total;
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  if (!(start > 0) || !(factor > 1) || count < 1) {
    ABSL_RAW_LOG(FATAL, "ExponentialBuckets needs start > 0, factor > 1");
  }
  std::vector<double> b;
  double v = start;
  for (int i = 0; i < count; ++i, v *= factor) b.push_back(v);
  return b;
}

std::vector<double> LinearBuckets(double start, double width, int count) {
  if (!(width > 0) || count < 1) {
    ABSL_RAW_LOG(FATAL, "LinearBuckets needs width > 0");
  }
  std::vector<double> b;
  for (int i = 0; i < count; ++i) b.push_back(start + i * width);
  return b;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);  // Shortest round trip.
  return std::string(buf, r.ptr);
}

std::string EscapeHelp(absl::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeLabelValue(absl::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

bool IsValidMetricName(absl::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool IsValidLabelName(absl::string_view name) {
  if (name.empty() || absl::StartsWith(name, "__")) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

FamilyBase::FamilyBase(std::string name, std::string help, Type type,
                       std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)) {
  if (!IsValidMetricName(name_)) {
    ABSL_RAW_LOG(FATAL, "invalid metric name '%s'", name_.c_str());
  }
  for (const std::string& l : label_names_) {
    if (!IsValidLabelName(l) || (type_ == Type::kHistogram && l == "le")) {
      ABSL_RAW_LOG(FATAL, "invalid label name '%s' of metric %s", l.c_str(),
                   name_.c_str());
    }
  }
}

void FamilyBase::CheckArity(const std::vector<std::string>& values) const {
  if (values.size() != label_names_.size()) {
    ABSL_RAW_LOG(FATAL, "metric %s takes %zu label values, got %zu",
                 name_.c_str(), label_names_.size(), values.size());
  }
}

void FamilyBase::Render(std::string* out) const {
  absl::StrAppend(out, "# HELP ", name_, " ", EscapeHelp(help_), "\n");
  absl::StrAppend(out, "# TYPE ", name_, " ", TypeName(type_), "\n");
  RenderSamples(out);
}

void FamilyBase::AppendSample(std::string* out, absl::string_view suffix,
                              const std::vector<std::string>& values,
                              absl::string_view extra_label,
                              absl::string_view extra, double value) const {
  absl::StrAppend(out, name_, suffix);
  if (!values.empty() || !extra_label.empty()) {
    out->push_back('{');
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) out->push_back(',');
      absl::StrAppend(out, label_names_[i], "=\"", EscapeLabelValue(values[i]),
                      "\"");
    }
    if (!extra_label.empty()) {
      if (!values.empty()) out->push_back(',');
      absl::StrAppend(out, extra_label, "=\"", extra, "\"");
    }
    out->push_back('}');
  }
  absl::StrAppend(out, " ", FormatValue(value), "\n");
}

template <>
void Family<Counter>::RenderSamples(std::string* out) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [values, c] : children_) {
    AppendSample(out, "", values, "", "", c->Value());
  }
}

template <>
void Family<Gauge>::RenderSamples(std::string* out) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [values, g] : children_) {
    AppendSample(out, "", values, "", "", g->Value());
  }
}

template <>
void Family<Histogram>::RenderSamples(std::string* out) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [values, h] : children_) {
    const Histogram::Snapshot s = h->Snap();
    for (size_t i = 0; i < s.bounds.size(); ++i) {
      AppendSample(out, "_bucket", values, "le", FormatValue(s.bounds[i]),
                   static_cast<double>(s.cumulative[i]));
    }
    AppendSample(out, "_bucket", values, "le", "+Inf",
                 static_cast<double>(s.count));
    AppendSample(out, "_sum", values, "", "", s.sum);
    AppendSample(out, "_count", values, "", "", static_cast<double>(s.count));
  }
}

CallbackFamily::CallbackFamily(std::string name, std::string help, Type type,
                               std::vector<std::string> label_names,
                               Collect collect)
    : FamilyBase(std::move(name), std::move(help), type,
                 std::move(label_names)),
      collect_(std::move(collect)) {
  if (type == Type::kHistogram) {
    ABSL_RAW_LOG(FATAL, "callback metric %s cannot be a histogram",
                 name_.c_str());
  }
}

void CallbackFamily::RenderSamples(std::string* out) const {
  std::vector<Sample> samples = collect_();
  std::sort(samples.begin(), samples.end(),
            [](const Sample& a, const Sample& b) {
              return a.label_values < b.label_values;
            });
  for (const Sample& s : samples) {
    CheckArity(s.label_values);
    AppendSample(out, "", s.label_values, "", "", s.value);
  }
}

Registry& Registry::Default() {
  static Registry* r = new Registry();
  return *r;
}

template <typename F>
F& Registry::Add(std::unique_ptr<F> family) {
  absl::MutexLock lock(&mu_);
  for (const auto& f : families_) {
    if (f->name() == family->name()) {
      ABSL_RAW_LOG(FATAL, "metric %s registered twice", f->name().c_str());
    }
  }
  F& ref = *family;
  families_.push_back(std::move(family));
  return ref;
}

Family<Counter>& Registry::AddCounter(const std::string& name,
                                      const std::string& help,
                                      std::vector<std::string> label_names) {
  return Add(std::make_unique<Family<Counter>>(name, help, Type::kCounter,
                                               std::move(label_names),
                                               [] { return new Counter(); }));
}

Family<Gauge>& Registry::AddGauge(const std::string& name,
                                  const std::string& help,
                                  std::vector<std::string> label_names) {
  return Add(std::make_unique<Family<Gauge>>(name, help, Type::kGauge,
                                             std::move(label_names),
                                             [] { return new Gauge(); }));
}

Family<Histogram>& Registry::AddHistogram(
    const std::string& name, const std::string& help,
    std::vector<double> bounds, std::vector<std::string> label_names) {
  bounds = CheckedBounds(std::move(bounds));
  return Add(std::make_unique<Family<Histogram>>(
      name, help, Type::kHistogram, std::move(label_names),
      [bounds] { return new Histogram(bounds); }));
}

void Registry::AddCallback(const std::string& name, const std::string& help,
                           Type type, std::vector<std::string> label_names,
                           CallbackFamily::Collect collect) {
  Add(std::make_unique<CallbackFamily>(name, help, type, std::move(label_names),
                                       std::move(collect)));
}

std::string Registry::Render() const {
  std::vector<std::shared_ptr<FamilyBase>> families;
  {
    absl::MutexLock lock(&mu_);
    families = families_;
  }
  std::string out;
  for (const auto& f : families) f->Render(&out);
  return out;
}

}  // namespace ringleader::metrics
