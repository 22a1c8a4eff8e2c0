#include "coordinator/scheduler/scheduler_policy.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "coordinator/scheduler/availability.h"
#include "coordinator/scheduler/queue_usage.h"
#include "coordinator/scheduler/reclaim.h"

namespace ringleader::scheduler {
namespace {

// Priority, then the queue's share, then age: the order jobs are served
// in, waiting or growing.
std::vector<const JobState*> InServiceOrder(std::vector<const JobState*> jobs,
                                            const QueueUsage& usage) {
  std::sort(jobs.begin(), jobs.end(),
            [&](const JobState* a, const JobState* b) {
              const double sa = usage.Share(a->queue);
              const double sb = usage.Share(b->queue);
              return std::tie(b->priority, sa, a->submitted, a->id) <
                     std::tie(a->priority, sb, b->submitted, b->id);
            });
  return jobs;
}

// One scheduling pass over its working state.
class Pass {
 public:
  Pass(const PoolState& pool, absl::Time now)
      : usage_(pool.queues, pool.jobs), avail_(pool.free_workers, now) {
    for (const JobState& j : pool.jobs) {
      if (j.workers > 0) {
        running_.push_back(&j);
        avail_.Release(j.workers, j.expected_end);
        total_ += j.workers;
      } else {
        waiting_.push_back(&j);
      }
    }
    total_ += pool.free_workers;
    waiting_ = InServiceOrder(waiting_, usage_);
  }

  Plan Run() {
    for (const JobState* j : waiting_) Serve(*j);
    Grow();
    return std::move(plan_);
  }

 private:
  void Serve(const JobState& j);
  bool Preempt(const JobState& j);
  // `holds_back`: it waits for the pool's workers (not its queue's quota),
  // so jobs behind it neither preempt nor start on workers it will need.
  void Wait(const JobState& j, const std::string& why, bool holds_back = true);
  std::string Needs(const JobState& j) const;
  void Grow();

  QueueUsage usage_;
  Availability avail_;
  int64_t total_ = 0;  // Workers in the pool, free or not.
  std::vector<const JobState*> running_;
  std::vector<const JobState*> waiting_;
  absl::flat_hash_set<std::string> moved_;  // Shrunk or preempted here.
  bool someone_waits_for_workers_ = false;
  // The first job that waits for workers could not be placed by the
  // known ends (one is not known yet): whatever started behind it might
  // delay it, so nothing does. Later jobs that cannot be placed do not
  // stop backfill (as in EASY backfill, only the head is always kept).
  bool unplaced_reservation_ = false;
  bool head_waits_ = false;
  int32_t highest_waiting_ = INT32_MIN;  // Its priority, where one waits.
  std::vector<const JobState*> left_waiting_;
  Plan plan_;
};

void Pass::Serve(const JobState& j) {
  const int32_t need = j.min_workers;
  if (need > total_) {
    return Wait(j, absl::StrCat(Needs(j), "; the pool has ", total_));
  }
  if (!usage_.MayTake(j.queue, need)) {
    return Wait(j,
                absl::StrCat(Needs(j), "; queue ", j.queue, " holds ",
                             usage_.Used(j.queue),
                             " and may not borrow past its quota"),
                /*holds_back=*/false);
  }
  if (need <= avail_.Now() && need <= avail_.Headroom() &&
      !unplaced_reservation_) {
    avail_.Take(need);
    usage_.Add(j.queue, need);
    plan_.decisions.push_back({Move::kAdmit, j.id, need, "admitted"});
    return;
  }
  if (need <= avail_.Now()) {
    return Wait(j, absl::StrCat(Needs(j), "; starting it now would delay ",
                                "a job ahead of it"));
  }
  if (!someone_waits_for_workers_ && Preempt(j)) return;
  Wait(j, Needs(j));
}

bool Pass::Preempt(const JobState& j) {
  std::vector<const JobState*> candidates;
  for (const JobState* r : running_) {
    if (!moved_.contains(r->id)) candidates.push_back(r);
  }
  const int32_t free = avail_.Now();
  std::optional<Reclaimed> r =
      Reclaim(j, j.min_workers - free, candidates, usage_);
  if (!r.has_value()) return false;
  for (const Decision& d : r->moves) {
    const JobState* v =
        *std::find_if(running_.begin(), running_.end(),
                      [&](const JobState* x) { return x->id == d.job_id; });
    const int32_t given = v->workers - d.workers;
    avail_.Release(-given, v->expected_end);
    avail_.FreeNow(given);
    usage_.Add(v->queue, -given);
    moved_.insert(v->id);
    plan_.decisions.push_back(d);
  }
  avail_.Take(j.min_workers);
  usage_.Add(j.queue, j.min_workers);
  plan_.decisions.push_back(
      {Move::kAdmit, j.id, j.min_workers, "admitted; room made"});
  return true;
}

std::string Pass::Needs(const JobState& j) const {
  int ahead = 0;
  for (const JobState* w : left_waiting_) ahead += w->priority > j.priority;
  std::string out = absl::StrCat(
      "needs ", j.min_workers, j.min_workers == 1 ? " worker, " : " workers, ",
      avail_.Now(), " free");
  if (ahead > 0) {
    absl::StrAppend(&out, ", ", ahead, ahead == 1 ? " job" : " jobs",
                    " of higher priority ahead");
  }
  return out;
}

void Pass::Wait(const JobState& j, const std::string& why, bool holds_back) {
  plan_.waiting.push_back({j.id, why});
  left_waiting_.push_back(&j);
  if (!holds_back || j.min_workers > total_) return;
  someone_waits_for_workers_ = true;
  highest_waiting_ = std::max(highest_waiting_, j.priority);
  const absl::Time fit = avail_.EarliestFit(j.min_workers);
  if (fit != absl::InfiniteFuture()) {
    avail_.Reserve(j.min_workers, fit);
  } else if (!head_waits_) {
    unplaced_reservation_ = true;
  }
  head_waits_ = true;
}

void Pass::Grow() {
  std::vector<const JobState*> growing;
  for (const JobState* r : running_) {
    if (!moved_.contains(r->id)) growing.push_back(r);
  }
  for (const Decision& d : plan_.decisions) {
    if (d.move != Move::kAdmit) continue;
    for (const JobState* w : waiting_) {
      if (w->id == d.job_id) growing.push_back(w);
    }
  }
  for (const JobState* j : InServiceOrder(growing, usage_)) {
    if (someone_waits_for_workers_ && j->priority <= highest_waiting_) continue;
    int32_t size = j->workers;
    for (const Decision& d : plan_.decisions) {
      if (d.job_id == j->id) size = d.workers;  // Admitted here.
    }
    const int32_t give =
        std::min({j->max_workers - size, avail_.Now(), avail_.Headroom(),
                  usage_.Allowance(j->queue)});
    if (give <= 0) continue;
    avail_.Take(give);
    usage_.Add(j->queue, give);
    plan_.decisions.push_back(
        {Move::kGrow, j->id, size + give,
         absl::StrCat("grown to ", size + give, " on free workers")});
  }
}

}  // namespace

Plan Schedule(const PoolState& pool, absl::Time now) {
  return Pass(pool, now).Run();
}

}  // namespace ringleader::scheduler
