#ifndef RINGLEADER_COMMON_METRICS_H_
#define RINGLEADER_COMMON_METRICS_H_

// A small Prometheus client: counters, gauges and fixed-bucket histograms,
// optionally labelled, rendered in the text exposition format 0.0.4.
//
// Updating an instrument is a few relaxed atomic operations and never takes
// a lock, so hot paths (a bucket's all-reduce, a training step) can record
// freely; looking up a labelled child takes the family's mutex, so callers
// keep the returned pointer (it stays valid as long as the registry).
// Registering a metric twice, an invalid name, or a wrong number of label
// values is a programming error and aborts.
//
// Registries are objects: components take a Registry* (tests give each
// component its own); a daemon can use Registry::Default().

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace ringleader::metrics {

class Counter {
 public:
  // `v` must be >= 0 (a counter only goes up); negative values are ignored.
  void Increment(double v = 1.0);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double v);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Buckets are upper bounds (inclusive, as Prometheus' `le`), strictly
// increasing; the +Inf bucket is implicit.
class Histogram {
 public:
  struct Snapshot {
    std::vector<double> bounds;        // Without +Inf.
    std::vector<uint64_t> cumulative;  // bounds.size() + 1 entries (+Inf).
    double sum = 0;
    uint64_t count = 0;  // == cumulative.back().
  };

  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);
  Snapshot Snap() const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  const std::vector<double> bounds_;
  // Per bucket (not cumulative); the last one is +Inf.
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

// `count` bounds start, start*factor, ... (start > 0, factor > 1).
std::vector<double> ExponentialBuckets(double start, double factor, int count);
// `count` bounds start, start+width, ...
std::vector<double> LinearBuckets(double start, double width, int count);

enum class Type { kCounter, kGauge, kHistogram };

// Text format helpers, exposed for tests.
std::string FormatValue(double v);  // "+Inf", "-Inf", "NaN", shortest form.
std::string EscapeHelp(absl::string_view help);         // \ and newline.
std::string EscapeLabelValue(absl::string_view value);  // \, " and newline.
bool IsValidMetricName(absl::string_view name);
bool IsValidLabelName(absl::string_view name);

class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, Type type,
             std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;
  const std::string& name() const { return name_; }
  // Appends HELP, TYPE and every sample.
  void Render(std::string* out) const;

 protected:
  // Appends the samples only.
  virtual void RenderSamples(std::string* out) const = 0;
  // `name{labels[,extra]} value\n`.
  void AppendSample(std::string* out, absl::string_view suffix,
                    const std::vector<std::string>& values,
                    absl::string_view extra_label, absl::string_view extra,
                    double value) const;
  void CheckArity(const std::vector<std::string>& values) const;

  const std::string name_;
  const std::string help_;
  const Type type_;
  const std::vector<std::string> label_names_;
};

// Instruments of one metric, one per distinct label values.
template <typename T>
class Family : public FamilyBase {
 public:
  Family(std::string name, std::string help, Type type,
         std::vector<std::string> label_names, std::function<T*()> make)
      : FamilyBase(std::move(name), std::move(help), type,
                   std::move(label_names)),
        make_(std::move(make)) {}

  // The instrument for these label values (as many as label names),
  // created on first use.
  T* WithLabels(const std::vector<std::string>& values) {
    CheckArity(values);
    absl::MutexLock lock(&mu_);
    std::unique_ptr<T>& slot = children_[values];
    if (slot == nullptr) slot.reset(make_());
    return slot.get();
  }
  // The unlabelled instrument.
  T* Get() { return WithLabels({}); }

 protected:
  void RenderSamples(std::string* out) const override;

 private:
  const std::function<T*()> make_;
  mutable absl::Mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> children_
      ABSL_GUARDED_BY(mu_);
};

template <>
void Family<Counter>::RenderSamples(std::string* out) const;
template <>
void Family<Gauge>::RenderSamples(std::string* out) const;
template <>
void Family<Histogram>::RenderSamples(std::string* out) const;

// A metric computed when scraped (for example, jobs by state read from the
// job manager), so that no state has to be mirrored.
class CallbackFamily : public FamilyBase {
 public:
  struct Sample {
    std::vector<std::string> label_values;
    double value = 0;
  };
  using Collect = std::function<std::vector<Sample>()>;
  CallbackFamily(std::string name, std::string help, Type type,
                 std::vector<std::string> label_names, Collect collect);

 protected:
  void RenderSamples(std::string* out) const override;

 private:
  const Collect collect_;
};

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // A process-wide registry for daemons' mains.
  static Registry& Default();

  Family<Counter>& AddCounter(const std::string& name, const std::string& help,
                              std::vector<std::string> label_names = {});
  Family<Gauge>& AddGauge(const std::string& name, const std::string& help,
                          std::vector<std::string> label_names = {});
  Family<Histogram>& AddHistogram(const std::string& name,
                                  const std::string& help,
                                  std::vector<double> bounds,
                                  std::vector<std::string> label_names = {});
  // `type` is kCounter or kGauge. `collect` runs on every scrape, without
  // any registry lock held.
  void AddCallback(const std::string& name, const std::string& help, Type type,
                   std::vector<std::string> label_names,
                   CallbackFamily::Collect collect);

  // Every metric in the text exposition format 0.0.4, in registration
  // order.
  std::string Render() const;

 private:
  template <typename F>
  F& Add(std::unique_ptr<F> family);

  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<FamilyBase>> families_ ABSL_GUARDED_BY(mu_);
};

// The content type of Render()'s output.
inline constexpr char kContentType[] =
    "text/plain; version=0.0.4; charset=utf-8";

}  // namespace ringleader::metrics

#endif  // RINGLEADER_COMMON_METRICS_H_
