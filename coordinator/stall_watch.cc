#include "coordinator/stall_watch.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace ringleader {
namespace {

int64_t Ms(absl::Duration d) { return absl::ToInt64Milliseconds(d); }

}  // namespace

void StallWatch::StartGeneration(const std::string& job_id,
                                 const Rendezvous::Generation& gen,
                                 absl::Time now) {
  absl::MutexLock lock(&mu_);
  Generation& g = by_job_[job_id];
  if (g.number > gen.number) return;  // A newer one formed first.
  for (const MemberState& m : g.members) job_of_.erase(m.worker_id);
  g = Generation();
  g.number = gen.number;
  for (const Rendezvous::Member& m : gen.members) {
    MemberState state;
    state.rank = m.rank;
    state.worker_id = m.worker_id;
    state.host = m.hostname;
    state.heard = now;
    // What is known of it until its first heartbeat: it joined.
    state.report.set_phase(v1::WORKER_PHASE_RENDEZVOUS);
    g.members.push_back(std::move(state));
    job_of_[m.worker_id] = job_id;
  }
  std::sort(g.members.begin(), g.members.end(),
            [](const MemberState& a, const MemberState& b) {
              return a.rank < b.rank;
            });
}

void StallWatch::EndGeneration(const std::string& job_id, int64_t number) {
  absl::MutexLock lock(&mu_);
  auto it = by_job_.find(job_id);
  if (it == by_job_.end() || it->second.number > number) return;
  for (const MemberState& m : it->second.members) job_of_.erase(m.worker_id);
  by_job_.erase(it);
}

void StallWatch::Heard(const v1::HeartbeatRequest& r, absl::Time now) {
  absl::MutexLock lock(&mu_);
  auto job = job_of_.find(r.worker_id());
  if (job == job_of_.end() || job->second != r.job_id()) return;
  auto it = by_job_.find(job->second);
  if (it == by_job_.end() || it->second.number != r.generation()) return;
  for (MemberState& m : it->second.members) {
    if (m.worker_id != r.worker_id()) continue;
    m.heard = std::max(m.heard, now);
    m.report = r;
    return;
  }
}

absl::Duration StallWatch::Threshold(const Generation& g) const {
  std::vector<int64_t> times;
  for (const MemberState& m : g.members) {
    if (m.report.step_time_ms() > 0) times.push_back(m.report.step_time_ms());
  }
  if (times.empty()) return options_.floor;
  // The upper median: with two ranks, the slower one's.
  std::nth_element(times.begin(), times.begin() + times.size() / 2,
                   times.end());
  const absl::Duration median = absl::Milliseconds(times[times.size() / 2]);
  return std::max(options_.floor, median * options_.step_time_factor);
}

absl::Duration StallWatch::Blocked(const MemberState& m, absl::Time now) const {
  if (m.report.collective_wait_ms() <= 0 || Silent(m, now)) {
    return absl::ZeroDuration();
  }
  // Still blocked since it said so: a collective ends with every rank.
  return absl::Milliseconds(m.report.collective_wait_ms()) + (now - m.heard);
}

const StallWatch::MemberState* StallWatch::WaitedFor(const Generation& g,
                                                     absl::Time now) const {
  // Ordered by how strongly the evidence points at the member: silent
  // longest first, then not blocked, at the lowest step, longest in its
  // phase; then blocked the shortest (every member blocked and none
  // silent: the last to enter the collective is the best guess).
  auto key = [&](const MemberState& m) {
    const bool silent = Silent(m, now);
    const absl::Duration blocked = Blocked(m, now);
    const int64_t in_phase =
        m.report.phase_ms() + (silent ? 0 : Ms(now - m.heard));
    return std::make_tuple(!silent, silent ? -Ms(now - m.heard) : 0,
                           blocked > absl::ZeroDuration(),
                           m.report.phase_step(), Ms(blocked), -in_phase);
  };
  const MemberState* best = nullptr;
  for (const MemberState& m : g.members) {
    if (best == nullptr || key(m) < key(*best)) best = &m;
  }
  return best;
}

std::optional<v1::WaitingFor> StallWatch::JudgeLocked(const Generation& g,
                                                      absl::Time now) const {
  const absl::Duration threshold = Threshold(g);
  const MemberState* longest = nullptr;
  int32_t waiting = 0;
  for (const MemberState& m : g.members) {
    const absl::Duration blocked = Blocked(m, now);
    if (blocked < threshold) continue;
    ++waiting;
    if (longest == nullptr || blocked > Blocked(*longest, now)) longest = &m;
  }
  if (longest == nullptr) return std::nullopt;
  const MemberState* culprit = WaitedFor(g, now);
  if (culprit == nullptr) return std::nullopt;
  v1::WaitingFor w;
  w.set_waited_ms(Ms(Blocked(*longest, now)));
  w.set_wait_phase(longest->report.phase());
  w.set_step(longest->report.phase_step());
  w.set_bucket(longest->report.phase_bucket());
  w.set_waiting_ranks(waiting);
  w.set_threshold_ms(Ms(threshold));
  w.set_rank(culprit->rank);
  w.set_worker_id(culprit->worker_id);
  w.set_host(culprit->host);
  w.set_phase(culprit->report.phase());
  if (Silent(*culprit, now)) {
    w.set_silent_ms(std::max<int64_t>(Ms(now - culprit->heard), 1));
    w.set_phase_ms(culprit->report.phase_ms());
  } else {
    w.set_phase_ms(culprit->report.phase_ms() + Ms(now - culprit->heard));
  }
  return w;
}

std::optional<v1::WaitingFor> StallWatch::Judge(const std::string& job_id,
                                                absl::Time now) const {
  absl::MutexLock lock(&mu_);
  auto it = by_job_.find(job_id);
  if (it == by_job_.end()) return std::nullopt;
  return JudgeLocked(it->second, now);
}

std::string StallWatch::Identity(const std::optional<v1::WaitingFor>& w) {
  if (!w.has_value()) return "";
  return absl::StrCat(w->rank(), "/", w->worker_id(), "/", w->phase(), "/",
                      w->silent_ms() > 0, "/", w->wait_phase(), "/", w->step());
}

std::vector<StallWatch::Change> StallWatch::Changes(absl::Time now) {
  absl::MutexLock lock(&mu_);
  std::vector<Change> out;
  for (const auto& [job_id, g] : by_job_) {
    std::optional<v1::WaitingFor> w = JudgeLocked(g, now);
    const std::string id = Identity(w);
    auto was = published_.find(job_id);
    if (id == (was == published_.end() ? "" : was->second)) continue;
    if (id.empty()) {
      published_.erase(was);
    } else {
      published_[job_id] = id;
    }
    out.push_back({job_id, std::move(w)});
  }
  // Jobs whose generation ended with a verdict out: it goes too.
  for (auto it = published_.begin(); it != published_.end();) {
    if (by_job_.contains(it->first)) {
      ++it;
      continue;
    }
    out.push_back({it->first, std::nullopt});
    published_.erase(it++);
  }
  return out;
}

}  // namespace ringleader
