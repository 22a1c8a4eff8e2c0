#include "coordinator/member_liveness.h"

#include <algorithm>

namespace ringleader {
namespace {

// Steps the highest step must move past a mark before that mark proves
// every member was alive after it (see the header).
constexpr int64_t kProofSteps = 3;

}  // namespace

void MemberLiveness::StartGeneration(const std::string& job_id, int64_t number,
                                     const std::vector<std::string>& members,
                                     absl::Time now) {
  absl::MutexLock lock(&mu_);
  Generation& g = generations_[job_id];
  if (g.number > number) return;  // A newer one formed first.
  for (const auto& [worker, heard] : g.last_heard) job_of_.erase(worker);
  g = Generation();
  g.number = number;
  for (const std::string& m : members) {
    g.last_heard[m] = now;
    job_of_[m] = job_id;
  }
  g.latest = now;
}

void MemberLiveness::EndGeneration(const std::string& job_id, int64_t number) {
  absl::MutexLock lock(&mu_);
  auto it = generations_.find(job_id);
  if (it == generations_.end() || it->second.number > number) return;
  for (const auto& [worker, heard] : it->second.last_heard) {
    job_of_.erase(worker);
  }
  generations_.erase(it);
}

void MemberLiveness::Forget(const std::string& worker_id) {
  absl::MutexLock lock(&mu_);
  auto job = job_of_.find(worker_id);
  if (job == job_of_.end()) return;
  auto it = generations_.find(job->second);
  if (it != generations_.end()) {
    it->second.last_heard.erase(worker_id);
    it->second.latest = LatestHeard(it->second);
    it->second.blocked.erase(worker_id);
  }
  job_of_.erase(job);
}

void MemberLiveness::Heard(const std::string& worker_id, int64_t generation,
                           int64_t step, absl::Time now,
                           absl::Duration collective_wait) {
  absl::MutexLock lock(&mu_);
  auto job = job_of_.find(worker_id);
  if (job == job_of_.end()) return;
  Generation& g = generations_[job->second];
  if (g.number != generation) return;
  if (now - g.latest > options_.lease) ExcuseSilence(g, now);
  g.last_heard[worker_id] = std::max(g.last_heard[worker_id], now);
  g.latest = std::max(g.latest, now);
  if (collective_wait > absl::ZeroDuration()) {
    g.blocked[worker_id] = {now - collective_wait, now};
  } else {
    g.blocked.erase(worker_id);
  }
  AddStep(g, step, now);
}

absl::Time MemberLiveness::LatestHeard(const Generation& g) {
  absl::Time latest = absl::InfinitePast();
  for (const auto& [worker, heard] : g.last_heard) {
    latest = std::max(latest, heard);
  }
  return latest;
}

void MemberLiveness::ExcuseSilence(Generation& g, absl::Time now) {
  // The first member heard after every member went silent: our link is back.
  // The others' calls are in their retry backoff or on a channel they are
  // opening, so the outage is not held against them; each gets
  // silent_member_limit from now, as if it had been heard now.
  for (auto& [worker, heard] : g.last_heard) heard = std::max(heard, now);
}

void MemberLiveness::AddStep(Generation& g, int64_t step, absl::Time now) {
  if (!g.marks.empty() && step <= g.marks.back().step) return;
  g.marks.push_back({now, step});
  // Only the newest mark at least kProofSteps below the top can be
  // evidence; the ones before it never will be again.
  while (g.marks.size() >= 2 &&
         g.marks[1].step <= g.marks.back().step - kProofSteps) {
    g.marks.pop_front();
  }
}

absl::Time MemberLiveness::StepEvidence(const Generation& g) {
  if (g.marks.empty()) return absl::InfinitePast();
  const StepMark& first = g.marks.front();
  return first.step <= g.marks.back().step - kProofSteps ? first.time
                                                         : absl::InfinitePast();
}

MemberLiveness::Verdict MemberLiveness::Judge(const std::string& worker_id,
                                              absl::Time now,
                                              bool replaced) const {
  absl::MutexLock lock(&mu_);
  auto job = job_of_.find(worker_id);
  if (job == job_of_.end()) return Verdict::kNotMember;
  auto it = generations_.find(job->second);
  if (it == generations_.end()) return Verdict::kNotMember;
  const Generation& g = it->second;
  auto heard = g.last_heard.find(worker_id);
  if (heard == g.last_heard.end()) return Verdict::kNotMember;
  if (replaced) {
    return StepEvidence(g) > heard->second ? Verdict::kKeep : Verdict::kGone;
  }
  const absl::Time latest = g.latest;
  if (now - latest > options_.lease) {
    // Nobody in the generation is heard: our link, most likely.
    return now - latest <= options_.silent_generation_limit ? Verdict::kKeep
                                                            : Verdict::kGone;
  }
  const absl::Time contact = std::max(heard->second, StepEvidence(g));
  if (now - contact > options_.lease &&
      PeersStuck(g, worker_id, contact, now)) {
    return Verdict::kGone;
  }
  return now - contact <= options_.silent_member_limit ? Verdict::kKeep
                                                       : Verdict::kGone;
}

bool MemberLiveness::PeersStuck(const Generation& g,
                                const std::string& worker_id,
                                absl::Time contact, absl::Time now) const {
  int stuck = 0;
  for (const auto& [peer, heard] : g.last_heard) {
    // A silent peer says nothing about the collective (it may be hung too).
    if (peer == worker_id || now - heard > options_.lease) continue;
    auto b = g.blocked.find(peer);
    // A heard peer that is not blocked (computing, loading data, or its
    // collectives completing) may be the one the others wait for, or proof
    // that the collectives still complete: no verdict.
    if (b == g.blocked.end() || b->second.reported <= contact ||
        b->second.reported - b->second.since < options_.hung_wait) {
      return false;
    }
    ++stuck;
  }
  return stuck > 0;
}

}  // namespace ringleader
