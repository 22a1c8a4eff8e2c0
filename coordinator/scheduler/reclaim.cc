#include "coordinator/scheduler/reclaim.h"

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace ringleader::scheduler {
namespace {

struct Victim {
  const JobState* job;
  // A job of another queue gives up at most what its queue borrowed (as
  // Kueue reclaims across a cohort): a queue within its quota keeps it,
  // whatever the priorities, or two jobs would take it from each other in
  // turn. Within the job's own queue, priority alone decides.
  bool limited;
  bool by_priority;  // Else for a queue under its quota.
};

// The running jobs `job` may displace, in victim order.
std::vector<Victim> Victims(const JobState& job,
                            const std::vector<const JobState*>& running,
                            const QueueUsage& usage) {
  const bool within_quota = usage.WithinQuotaAfter(job.queue, job.min_workers);
  std::vector<Victim> out;
  for (const JobState* v : running) {
    const bool other_queue = v->queue != job.queue;
    if (v->priority < job.priority) {
      out.push_back({v, other_queue, true});
    } else if (within_quota && other_queue && usage.Borrowed(v->queue) > 0) {
      out.push_back({v, true, false});
    }
  }
  std::sort(out.begin(), out.end(), [&](const Victim& a, const Victim& b) {
    const double sa = usage.Share(a.job->queue), sb = usage.Share(b.job->queue);
    return std::tie(a.job->priority, sb, b.job->submitted, a.job->id) <
           std::tie(b.job->priority, sa, a.job->submitted, b.job->id);
  });
  return out;
}

// What each queue may still give back to another's job: what it borrowed,
// less what this plan took from it.
using Budgets = absl::flat_hash_map<std::string, int32_t>;

int32_t Limit(const Victim& v, const Budgets& budgets) {
  if (!v.limited) return std::numeric_limits<int32_t>::max();
  auto it = budgets.find(v.job->queue);
  return it == budgets.end() ? 0 : std::max(it->second, 0);
}

void Spend(const Victim& v, int32_t n, Budgets& budgets) {
  if (v.limited) budgets[v.job->queue] -= n;
}

std::string For(const JobState& job, const Victim& v) {
  return v.by_priority
             ? absl::StrCat("for job ", job.id, ", priority ", job.priority)
             : absl::StrCat("for job ", job.id, ", its queue ", job.queue,
                            " under its quota");
}

// Shrinks `victims` (but those preempted) in order for `need` workers;
// false if they cannot give that many.
bool Shrink(const JobState& job, const std::vector<Victim>& victims,
            const std::vector<bool>& preempted, int32_t need, Budgets& budgets,
            Reclaimed& out) {
  for (size_t i = 0; i < victims.size() && need > 0; ++i) {
    if (preempted[i]) continue;
    const Victim& v = victims[i];
    const int32_t room =
        std::min(v.job->workers - v.job->min_workers, Limit(v, budgets));
    const int32_t take = std::min(std::max(room, 0), need);
    if (take == 0) continue;
    Spend(v, take, budgets);
    need -= take;
    out.freed += take;
    out.moves.push_back(
        {Move::kShrink, v.job->id, v.job->workers - take,
         absl::StrCat("shrunk to ", v.job->workers - take, " ", For(job, v))});
  }
  return need == 0;
}

// Preempts the victims marked in `preempted`, then shrinks the others for
// what is still needed; nullopt if that is not enough.
std::optional<Reclaimed> Try(const JobState& job,
                             const std::vector<Victim>& victims,
                             const std::vector<bool>& preempted,
                             int32_t shortfall, Budgets budgets) {
  Reclaimed out;
  int32_t need = shortfall;
  for (size_t i = 0; i < victims.size(); ++i) {
    if (!preempted[i]) continue;
    const JobState& v = *victims[i].job;
    Spend(victims[i], v.workers, budgets);
    need -= v.workers;
    out.freed += v.workers;
    out.moves.push_back({Move::kPreempt, v.id, 0,
                         absl::StrCat("preempted ", For(job, victims[i]))});
  }
  if (need <= 0 || Shrink(job, victims, preempted, need, budgets, out)) {
    return out;
  }
  return std::nullopt;
}

// The set `preempted` made room; victims preempted early in it may be
// needless once a bigger one went (one of 1 worker, then one of 4 for a
// shortfall of 4). Each is spared in turn, latest first, where the room
// still suffices without it.
std::optional<Reclaimed> Fewest(const JobState& job,
                                const std::vector<Victim>& victims,
                                std::vector<bool> preempted, int32_t shortfall,
                                const Budgets& budgets) {
  for (size_t i = victims.size(); i-- > 0;) {
    if (!preempted[i]) continue;
    preempted[i] = false;
    if (!Try(job, victims, preempted, shortfall, budgets).has_value()) {
      preempted[i] = true;
    }
  }
  return Try(job, victims, preempted, shortfall, budgets);
}

}  // namespace

std::optional<Reclaimed> Reclaim(const JobState& job, int32_t shortfall,
                                 const std::vector<const JobState*>& running,
                                 const QueueUsage& usage) {
  const std::vector<Victim> victims = Victims(job, running, usage);
  Budgets budgets;
  for (const Victim& v : victims) {
    budgets[v.job->queue] = usage.Borrowed(v.job->queue);
  }
  // Shrinking alone first; then one more whole victim at a time, in victim
  // order, each one its queue's budget lets go whole.
  std::vector<bool> preempted(victims.size(), false);
  Budgets left = budgets;  // After the preemptions marked so far.
  for (size_t next = 0; next <= victims.size(); ++next) {
    if (Try(job, victims, preempted, shortfall, budgets).has_value()) {
      return Fewest(job, victims, preempted, shortfall, budgets);
    }
    while (next < victims.size() &&
           victims[next].job->workers > Limit(victims[next], left)) {
      ++next;
    }
    if (next == victims.size()) break;
    preempted[next] = true;
    Spend(victims[next], victims[next].job->workers, left);
  }
  return std::nullopt;
}

}  // namespace ringleader::scheduler
