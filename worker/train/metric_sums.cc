#include "worker/train/metric_sums.h"

namespace ringleader {

void MetricSums::Add(const std::string& name, double sum, int64_t count) {
  for (v1::MetricSum& m : sums_) {
    if (m.name() == name) {
      m.set_sum(m.sum() + sum);
      m.set_count(m.count() + count);
      return;
    }
  }
  v1::MetricSum& m = sums_.emplace_back();
  m.set_name(name);
  m.set_sum(sum);
  m.set_count(count);
}

v1::MetricSum MetricSums::Get(const std::string& name) const {
  for (const v1::MetricSum& m : sums_) {
    if (m.name() == name) return m;
  }
  return v1::MetricSum();
}

double MetricSums::Mean(const std::string& name) const {
  const v1::MetricSum m = Get(name);
  return m.count() > 0 ? m.sum() / static_cast<double>(m.count()) : 0.0;
}

void MetricSums::AppendTo(
    google::protobuf::RepeatedPtrField<v1::MetricSum>* out) const {
  for (const v1::MetricSum& m : sums_) *out->Add() = m;
}

}  // namespace ringleader
