#include "coordinator/job_history.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "glog/logging.h"

namespace ringleader {
namespace {

// Keeps the points on the even positions of the stride grid (the first
// included), doubles the stride, and keeps the latest point whatever its
// position. Points [0, grid) sit on the grid (report k * stride after the
// first); a last point past them is the latest report, `skipped` reports
// after the last grid point.
void Thin(v1::HistorySeries& series) {
  const int64_t stride = std::max<int64_t>(1, series.stride());
  const int n = series.points_size();
  const int grid = series.skipped() > 0 ? n - 1 : n;
  v1::HistoryPoint latest = series.points(n - 1);
  // Reports from the last kept grid point to the latest.
  const int64_t skipped = ((grid - 1) % 2) * stride + series.skipped();
  int kept = 0;
  for (int i = 0; i < grid; i += 2) {
    series.mutable_points()->SwapElements(kept++, i);
  }
  series.mutable_points()->DeleteSubrange(kept, n - kept);
  if (skipped > 0) *series.add_points() = std::move(latest);
  series.set_stride(stride * 2);
  series.set_skipped(skipped);
}

}  // namespace

void AddHistoryPoint(v1::HistorySeries& series, v1::HistoryPoint point,
                     int64_t max_points) {
  if (series.stride() < 1) series.set_stride(1);
  auto* points = series.mutable_points();
  if (!points->empty() && point.step() <= points->rbegin()->step()) {
    // The job went back (a resume from an older checkpoint): its curve
    // goes on from `point`, the points it replaces go.
    int keep = points->size();
    while (keep > 0 && points->Get(keep - 1).step() >= point.step()) --keep;
    points->DeleteSubrange(keep, points->size() - keep);
    series.set_skipped(0);
  } else if (series.skipped() > 0) {
    points->RemoveLast();  // The previous latest, off the grid.
  }
  series.set_skipped((series.skipped() + 1) % series.stride());
  *points->Add() = std::move(point);
  if (points->size() > max_points) Thin(series);
}

JobHistory::JobHistory(StateStore* store, const Clock* clock,
                       TimerQueue* timers, int64_t max_points)
    : store_(store),
      clock_(clock),
      timers_(timers),
      max_points_(std::max(max_points, kMinHistoryPoints)) {}

absl::Status JobHistory::Load() {
  absl::StatusOr<std::vector<v1::HistorySeries>> stored =
      store_->LoadHistories();
  if (!stored.ok()) return stored.status();
  absl::MutexLock lock(&mu_);
  for (v1::HistorySeries& s : *stored) {
    // A smaller --history_points than the series was kept at: thinned to
    // it on load, so the bound holds from the start.
    while (s.points_size() > max_points_) Thin(s);
    std::string id = s.job_id();
    series_[id] = std::move(s);
  }
  return absl::OkStatus();
}

void JobHistory::Start() {
  absl::MutexLock lock(&mu_);
  running_ = true;
  ScheduleNext();
}

void JobHistory::Stop() {
  {
    absl::MutexLock lock(&mu_);
    running_ = false;
    timers_->Cancel(timer_);
  }
  if (absl::Status s = Flush(); !s.ok()) {
    LOG(WARNING) << "training history not saved at stop: " << s;
  }
}

void JobHistory::ScheduleNext() {
  if (!running_) return;
  timer_ = timers_->Schedule(clock_->Now() + kFlushInterval, [this] {
    if (absl::Status s = Flush(); !s.ok()) {
      LOG(WARNING) << "training history not saved (tried again in "
                   << kFlushInterval << "): " << s;
    }
    absl::MutexLock lock(&mu_);
    ScheduleNext();
  });
}

void JobHistory::Record(const std::string& job_id, v1::HistoryPoint point) {
  absl::MutexLock lock(&mu_);
  v1::HistorySeries& s = series_[job_id];
  if (s.job_id().empty()) s.set_job_id(job_id);
  AddHistoryPoint(s, std::move(point), max_points_);
  dirty_.insert(job_id);
}

v1::HistorySeries JobHistory::Get(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = series_.find(job_id);
  if (it != series_.end()) return it->second;
  v1::HistorySeries empty;
  empty.set_job_id(job_id);
  empty.set_stride(1);
  return empty;
}

void JobHistory::Forget(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  series_.erase(job_id);
  dirty_.erase(job_id);
}

absl::Status JobHistory::Flush(const std::string& job_id) {
  absl::MutexLock flush(&flush_mu_);
  std::vector<v1::HistorySeries> changed;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = dirty_.begin(); it != dirty_.end();) {
      auto next = std::next(it);
      if (job_id.empty() || *it == job_id) {
        changed.push_back(series_.at(*it));
        dirty_.erase(it);
      }
      it = next;
    }
  }
  // Outside mu_: reports go on being recorded while the store writes.
  absl::Status first;
  for (const v1::HistorySeries& s : changed) {
    absl::Status saved = store_->SaveHistory(s);
    if (saved.ok()) continue;
    if (first.ok()) first = saved;
    absl::MutexLock lock(&mu_);
    if (series_.contains(s.job_id())) dirty_.insert(s.job_id());
  }
  return first;
}

}  // namespace ringleader
