#include "worker/timeline/timeline.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/atomic_file.h"
#include "nlohmann/json.hpp"

namespace ringleader {

Timeline::Timeline(std::string path, int rank, int64_t max_steps)
    : enabled_(!path.empty()),
      path_(std::move(path)),
      rank_(rank),
      max_steps_(max_steps > 0 ? max_steps : kDefaultSteps) {}

std::string Timeline::PathFor(const std::string& dir, const std::string& job_id,
                              int rank) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return absl::StrCat(d, "/", job_id, "-rank", rank, ".trace.json");
}

int64_t Timeline::NowUs() { return absl::GetCurrentTimeNanos() / 1000; }

void Timeline::SetStep(int64_t step) {
  if (phases_ != nullptr) phases_->SetStep(step);
  if (!enabled_) return;
  int64_t unset = 0;
  first_step_.compare_exchange_strong(unset, step, std::memory_order_relaxed);
  step_.store(step, std::memory_order_relaxed);
}

void Timeline::SetMetadata(const std::string& key, const std::string& value) {
  if (!enabled_) return;
  absl::MutexLock lock(&mu_);
  metadata_.emplace_back(key, value);
}

void Timeline::Record(const char* name, Track track, int64_t start_us,
                      int64_t end_us, int64_t step, int64_t bucket,
                      int64_t bytes) {
  if (!enabled_) return;
  const int64_t first = first_step_.load(std::memory_order_relaxed);
  if (first == 0 || step < first || step >= first + max_steps_) return;
  Event e;
  e.name = name;
  e.track = track;
  e.ts_us = start_us;
  e.dur_us = std::max<int64_t>(0, end_us - start_us);
  e.step = step;
  e.bucket = bucket;
  e.bytes = bytes;
  absl::MutexLock lock(&mu_);
  events_.push_back(std::move(e));
}

std::vector<Timeline::Event> Timeline::Events() const {
  absl::MutexLock lock(&mu_);
  return events_;
}

std::string Timeline::ToJson() const {
  using nlohmann::json;
  json events = json::array();
  auto meta = [&](const char* what, int tid, json args) {
    json m = {{"ph", "M"}, {"name", what}, {"pid", rank_}, {"args", args}};
    if (tid >= 0) m["tid"] = tid;
    events.push_back(std::move(m));
  };
  meta("process_name", -1, {{"name", absl::StrCat("rank ", rank_)}});
  meta("process_sort_index", -1, {{"sort_index", rank_}});
  meta("thread_name", static_cast<int>(Track::kCompute), {{"name", "compute"}});
  meta("thread_sort_index", static_cast<int>(Track::kCompute),
       {{"sort_index", 1}});
  meta("thread_name", static_cast<int>(Track::kComm),
       {{"name", "communication"}});
  meta("thread_sort_index", static_cast<int>(Track::kComm),
       {{"sort_index", 2}});
  json other = json::object();
  other["rank"] = rank_;
  absl::MutexLock lock(&mu_);
  for (const auto& [k, v] : metadata_) other[k] = v;
  for (const Event& e : events_) {
    json args = {{"step", e.step}};
    if (e.bucket >= 0) args["bucket"] = e.bucket;
    if (e.bytes >= 0) args["bytes"] = e.bytes;
    events.push_back({{"name", e.name},
                      {"cat", e.track == Track::kComm ? "comm" : "compute"},
                      {"ph", "X"},
                      {"ts", e.ts_us},
                      {"dur", e.dur_us},
                      {"pid", rank_},
                      {"tid", static_cast<int>(e.track)},
                      {"args", std::move(args)}});
  }
  json doc = {{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ms"},
              {"otherData", std::move(other)}};
  return doc.dump();
}

absl::Status Timeline::Flush() const {
  if (!enabled_) return absl::OkStatus();
  const std::filesystem::path target(path_);
  std::error_code ec;
  if (target.has_parent_path()) {
    std::filesystem::create_directories(target.parent_path(), ec);
    if (ec) {
      return absl::InternalError(absl::StrCat("timeline: cannot create ",
                                              target.parent_path().string(),
                                              ": ", ec.message()));
    }
  }
  if (absl::Status s = WriteFileAtomically(path_, ToJson()); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("timeline: ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace ringleader
