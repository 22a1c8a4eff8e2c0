#include "coordinator/coordinator.h"

#include <cstdint>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "common/job_over.h"
#include "coordinator/generation_record.h"
#include "glog/logging.h"

namespace ringleader {
namespace {

// Names this coordinator process for the logs' cursors: a follower's cursor
// from before a restart is worth nothing after it.
std::string NewIncarnation() {
  std::random_device random;
  return absl::StrFormat("%08x%08x", random(), random());
}

// Extra time members of an adopted generation get for their first
// heartbeat after a coordinator restart: the reconnect of a worker's
// channel (its backoff is capped at 1 s) on top of the usual lease.
constexpr absl::Duration kAdoptionGrace = absl::Seconds(2);

// The members as the generation history records them.
std::vector<GenerationEvents::Member> EventMembers(
    const Rendezvous::Generation& gen) {
  std::vector<GenerationEvents::Member> out;
  out.reserve(gen.members.size());
  for (const Rendezvous::Member& m : gen.members) {
    out.push_back({m.worker_id, m.hostname});
  }
  return out;
}

std::vector<std::string> MemberIds(const Rendezvous::Generation& gen) {
  std::vector<std::string> ids;
  ids.reserve(gen.members.size());
  for (const Rendezvous::Member& m : gen.members) ids.push_back(m.worker_id);
  return ids;
}

// The job manager applies rendezvous news by generation number and ignores
// what came too late to matter; it refuses news of a job that ended or was
// deleted meanwhile (FAILED_PRECONDITION, NOT_FOUND), which is no error
// here either. Anything else (its store failed) is logged: the job's state
// may not survive a restart.
void LogUnapplied(const absl::Status& s, absl::string_view what) {
  if (s.ok() || absl::IsFailedPrecondition(s) || absl::IsNotFound(s)) return;
  LOG(WARNING) << what << " was not applied to the job: " << s;
}

}  // namespace

Coordinator::Coordinator(CoordinatorOptions options, StateStore* store,
                         Clock* clock, TimerQueue* timers)
    : options_(options),
      store_(store),
      clock_(clock),
      workers_(clock, {options.lease, options.heartbeat_interval,
                       options.max_workers}),
      jobs_(store, clock, options.retention),
      history_(store, clock, timers, options.history_points),
      rendezvous_(clock, timers),
      kv_(timers, options.kv_limits),
      barriers_(timers),
      liveness_({options.lease, options.silent_member_limit,
                 options.silent_generation_limit, options.hung_wait}),
      stalls_(options.stall),
      checks_(workers_, rendezvous_, jobs_),
      assigner_(workers_, jobs_, rendezvous_, options.preemption.window),
      facts_(jobs_),
      worker_calls_(checks_, workers_, rendezvous_, liveness_, connections_,
                    assigner_, stalls_, clock, options.lease,
                    {GoneHook(), StepHeardHook()}),
      join_calls_(checks_, workers_, jobs_, rendezvous_, facts_, clock,
                  {options.default_wait, options.max_wait}),
      bootstrap_calls_(checks_, rendezvous_, kv_, barriers_, clock,
                       {options.default_wait, options.max_wait}),
      training_calls_(checks_, workers_, jobs_, rendezvous_, facts_,
                      StepHeardHook()),
      watch_calls_(checks_, workers_, rendezvous_, jobs_, watchers_,
                   connections_, clock,
                   {options.lease, options.push_generation_end}, GoneHook()),
      user_calls_(
          jobs_, workers_,
          [this](const v1::Job& job) { return OpenRendezvous(job); },
          [this](v1::Job& job) { ShowWaitingFor(job); }),
      logs_(options.log_limits),
      log_calls_(checks_, workers_, jobs_, logs_, NewIncarnation()),
      history_calls_(jobs_, history_),
      preemption_(clock, timers, options.preemption, PreemptionHooks()),
      preempt_calls_(checks_, rendezvous_, preemption_),
      lease_sweep_(workers_, liveness_, clock, timers, options.sweep_interval,
                   GoneHook()),
      stall_sweep_(stalls_, clock, timers, options.sweep_interval,
                   [this](const std::string& job_id, const v1::WaitingFor* w) {
                     LogUnapplied(jobs_.SetWaitingFor(job_id, w),
                                  "the rank its ranks wait for");
                   }) {
  rendezvous_.SetPreemptedHook([this](const std::string& job_id, int64_t gen,
                                      const std::string& reason, bool whole) {
    OnGenerationPreempted(job_id, gen, reason, whole);
  });
  rendezvous_.SetFormedHook(
      [this](const std::string& job_id, const Rendezvous::Generation& gen) {
        OnGenerationFormed(job_id, gen);
      });
  rendezvous_.SetEndedHook([this](const std::string& job_id, int64_t gen,
                                  const std::string& reason) {
    OnGenerationEnded(job_id, gen, reason);
  });
  rendezvous_.SetResizedHook([this](const std::string& job_id, int64_t gen,
                                    const std::string& reason) {
    OnGenerationResized(job_id, gen, reason);
  });
  rendezvous_.SetTimedOutHook(
      [this](const std::string& job_id, const std::string& why) {
        OnRendezvousTimedOut(job_id, why);
      });
  rendezvous_.SetGoneHook([this](const std::string& job_id, int64_t gen,
                                 int32_t rank, const std::string& worker_id,
                                 const std::string& reason) {
    OnRankGone(job_id, gen, rank, worker_id, reason);
  });
  jobs_.SetFinishedHook([this](const v1::Job& job) { OnJobFinished(job); });
  jobs_.SetHistoryHook([this](const std::string& job_id, v1::HistoryPoint p) {
    history_.Record(job_id, std::move(p));
  });
  // A worker assigned a job may add to its log (its last lines come after
  // the job released it).
  assigner_.SetAssignedHook(
      [this](const std::string& job_id, const std::string& worker_id) {
        logs_.Admit(job_id, worker_id);
      });
  // A deleted job takes its history and its log with it.
  jobs_.SetDeletedHook([this](const std::string& job_id) {
    history_.Forget(job_id);
    generation_events_.Forget(job_id);
    logs_.Delete(job_id);
  });
}

Coordinator::~Coordinator() = default;

// ---- Start and stop ----

absl::Status Coordinator::Start() {
  if (absl::Status s = Recover(); !s.ok()) return s;
  // After the jobs: the retention pruned the histories of the jobs it
  // deleted with them.
  if (absl::Status s = history_.Load(); !s.ok()) return s;
  history_.Start();
  watch_calls_.Start();
  lease_sweep_.Start();
  stall_sweep_.Start();
  return absl::OkStatus();
}

void Coordinator::Stop() {
  lease_sweep_.Stop();
  stall_sweep_.Stop();
  watch_calls_.Stop(absl::UnavailableError("the coordinator is stopping"));
  history_.Stop();
}

absl::Status Coordinator::Recover() {
  // Generations that were live when the previous process died: their members
  // are most likely still training and will be back within a lease.
  absl::StatusOr<std::vector<v1::GenerationRecord>> stored =
      store_->LoadGenerations();
  if (!stored.ok()) return stored.status();
  absl::flat_hash_map<std::string, int64_t> adoptable;
  absl::flat_hash_map<std::string, const v1::GenerationRecord*> by_job;
  for (const v1::GenerationRecord& g : *stored) {
    adoptable[g.job_id()] = g.number();
    by_job[g.job_id()] = &g;
  }
  absl::StatusOr<std::vector<v1::Job>> live = jobs_.Recover(adoptable);
  if (!live.ok()) return live.status();
  for (const v1::Job& job : *live) {
    if (absl::Status s = OpenRendezvous(job); !s.ok()) return s;
    auto it = by_job.find(job.job_id());
    if (it == by_job.end()) continue;
    AdoptOrDrop(job, *it->second);
    by_job.erase(it);
  }
  // Generations of jobs that are no longer live.
  for (const auto& [job_id, record] : by_job) {
    DeleteStoredGeneration(job_id, -1);
  }
  return absl::OkStatus();
}

void Coordinator::AdoptOrDrop(const v1::Job& job,
                              const v1::GenerationRecord& record) {
  if (job.state() != v1::JOB_STATE_RUNNING) {
    DeleteStoredGeneration(job.job_id(), record.number());
    return;
  }
  absl::Status adopted = AdoptGeneration(record);
  if (adopted.ok()) return;
  // Not adoptable after all: the members rejoin, as after a failure.
  DeleteStoredGeneration(job.job_id(), record.number());
  LogUnapplied(
      jobs_.OnGenerationEnded(
          job.job_id(), record.number(),
          absl::StrCat("coordinator restarted and could not adopt it: ",
                       adopted.message())),
      "the end of an unadoptable generation");
}

absl::Status Coordinator::AdoptGeneration(const v1::GenerationRecord& record) {
  const Rendezvous::Generation gen = GenerationOf(record);
  if (absl::Status s = rendezvous_.RestoreGeneration(record.job_id(), gen);
      !s.ok()) {
    return s;
  }
  // Its members are heard from now on, as if they had just joined.
  const std::vector<std::string> members = MemberIds(gen);
  liveness_.StartGeneration(record.job_id(), gen.number, members,
                            clock_->Now());
  stalls_.StartGeneration(record.job_id(), gen, clock_->Now());
  finish_line_.StartGeneration(record.job_id(), gen.number, members);
  for (int i = 0; i < record.members_size(); ++i) {
    // A member that does not heartbeat in time expires, and that ends the
    // generation as any death does. Its token comes back with it (a record
    // without one: it registers again, and the generation ends as if it had
    // died).
    absl::Status restored = workers_.Restore(
        record.members(i), options_.lease + kAdoptionGrace,
        i < record.secrets_size() ? record.secrets(i) : v1::MemberSecret());
    if (!restored.ok()) {
      LOG(WARNING) << "member " << record.members(i).worker_id()
                   << " of adopted generation " << gen.number << " of job "
                   << record.job_id()
                   << " was not restored (it registers again): " << restored;
    }
  }
  assigner_.Adopt(record.job_id(), members);
  facts_.Adopted(record.job_id(), record.number());
  generation_events_.Formed(record.job_id(), gen.number, EventMembers(gen),
                            clock_->Now(), /*adopted=*/true);
  return absl::OkStatus();
}

absl::Status Coordinator::OpenRendezvous(const v1::Job& job) {
  Rendezvous::Config config;
  config.min_workers = job.spec().min_workers();
  config.max_workers = job.spec().max_workers();
  config.last_call = absl::Milliseconds(job.spec().rendezvous_last_call_ms());
  config.timeout = absl::Milliseconds(job.spec().rendezvous_timeout_ms());
  return rendezvous_.OpenJob(job.job_id(), config, job.generation());
}

// ---- Hooks ----

WorkerGoneHook Coordinator::GoneHook() {
  return [this](const v1::WorkerInfo& worker, const std::string& reason) {
    OnWorkerGone(worker, reason);
  };
}

StepHook Coordinator::StepHeardHook() {
  return
      [this](const std::string& job_id, int64_t generation,
             const std::string& worker_id, int64_t step, int64_t total_steps) {
        OnStepHeard(job_id, generation, worker_id, step, total_steps);
      };
}

void Coordinator::OnWorkerGone(const v1::WorkerInfo& worker,
                               const std::string& reason) {
  liveness_.Forget(worker.worker_id());
  connections_.Forget(worker.worker_id());
  if (worker.job_id().empty()) return;
  assigner_.Forget(worker.worker_id(), worker.job_id());
  // A rank that already sent its final report is done: its peers are only
  // finishing their own evaluation, so its exit ends nothing.
  if (jobs_.WorkerFinished(worker.job_id(), worker.worker_id())) return;
  rendezvous_.RemoveWorker(worker.job_id(), worker.worker_id(), reason);
}

void Coordinator::OnStepHeard(const std::string& job_id, int64_t generation,
                              const std::string& worker_id, int64_t step,
                              int64_t total_steps) {
  generation_events_.StepHeard(job_id, generation, step);
  if (finish_line_.Reached(job_id, generation, worker_id, step, total_steps)) {
    LOG(INFO) << "generation " << generation << " of job " << job_id
              << " trained to its last step on every rank";
    rendezvous_.Advance(job_id, generation, Rendezvous::Stage::kTrained);
  }
}

void Coordinator::OnGenerationFormed(const std::string& job_id,
                                     const Rendezvous::Generation& gen) {
  // The rendezvous runs this hook outside its lock: a newer generation's
  // can have run first. Its facts and stored record must stay.
  if (!facts_.Formed(job_id, gen.number)) return;
  const std::vector<std::string> members = MemberIds(gen);
  liveness_.StartGeneration(job_id, gen.number, members, clock_->Now());
  stalls_.StartGeneration(job_id, gen, clock_->Now());
  finish_line_.StartGeneration(job_id, gen.number, members);
  generation_events_.Formed(job_id, gen.number, EventMembers(gen),
                            clock_->Now());
  SaveGeneration(job_id, gen);
  // State left by generations that ended is of no use to anyone.
  kv_.DropJob(job_id, gen.number, "generation ended");
  barriers_.DropJob(job_id, gen.number, "generation ended");
  LogUnapplied(
      jobs_.OnGenerationFormed(job_id, gen.number,
                               static_cast<int32_t>(gen.members.size())),
      absl::StrCat("generation ", gen.number, " of job ", job_id, " formed"));
}

Preemption::Hooks Coordinator::PreemptionHooks() {
  Preemption::Hooks hooks;
  hooks.opened = [this](const GenerationKey& key) {
    if (!rendezvous_.Hold(key.first, key.second)) return;
    // The members still training are blocked in the step after the one the
    // first leaver completed (or will be): they abort it, keeping their
    // state, and wait for the verdict in the next rendezvous.
    watchers_.Ended(key.first, key.second,
                    absl::StrCat("generation ", key.second,
                                 " is being preempted: a member was "
                                 "signalled to stop"),
                    /*rejoin=*/true,
                    absl::ToInt64Milliseconds(options_.preemption.window));
  };
  hooks.end = [this](const GenerationKey& key, bool whole,
                     const std::string& reason,
                     const std::vector<std::string>& leaving) {
    rendezvous_.EndHeld(key.first, key.second, reason, whole, leaving);
  };
  return hooks;
}

bool Coordinator::HasLiveWork() const {
  if (preemption_.Size() > 0) return true;
  for (const v1::Job& job : jobs_.Active()) {
    if (job.state() == v1::JOB_STATE_RUNNING ||
        job.state() == v1::JOB_STATE_RENDEZVOUS) {
      return true;
    }
  }
  return false;
}

void Coordinator::OnGenerationPreempted(const std::string& job_id,
                                        int64_t generation,
                                        const std::string& reason, bool whole) {
  EndGeneration(job_id, generation, "preempted", reason);
  generation_events_.Ended(job_id, generation,
                           GenerationEvent::Kind::kPreempted, reason,
                           clock_->Now());
  preemption_.Forget({job_id, generation});
  LogUnapplied(jobs_.OnGenerationPreempted(job_id, generation, reason, whole),
               absl::StrCat("the preemption of generation ", generation,
                            " of job ", job_id));
}

void Coordinator::OnGenerationEnded(const std::string& job_id,
                                    int64_t generation,
                                    const std::string& reason) {
  EndGeneration(job_id, generation, "ended", reason);
  generation_events_.Ended(job_id, generation, GenerationEvent::Kind::kEnded,
                           reason, clock_->Now());
  preemption_.Forget({job_id, generation});
  LogUnapplied(
      jobs_.OnGenerationEnded(job_id, generation, reason),
      absl::StrCat("the end of generation ", generation, " of job ", job_id));
}

void Coordinator::OnGenerationResized(const std::string& job_id,
                                      int64_t generation,
                                      const std::string& reason) {
  EndGeneration(job_id, generation, "resized", reason);
  generation_events_.Ended(job_id, generation, GenerationEvent::Kind::kResized,
                           reason, clock_->Now());
  preemption_.Forget({job_id, generation});
  LogUnapplied(jobs_.OnGenerationResized(job_id, generation, reason),
               absl::StrCat("the resize of generation ", generation, " of job ",
                            job_id));
}

void Coordinator::EndGeneration(const std::string& job_id, int64_t generation,
                                const std::string& how,
                                const std::string& reason) {
  // The bench and the logs time the members' notice from this line.
  LOG(INFO) << "generation " << generation << " of job " << job_id << " ended ("
            << reason << "); telling its watching members";
  watchers_.Ended(job_id, generation,
                  absl::StrCat("generation ", generation, " ended: ", reason),
                  /*rejoin=*/true);
  const std::string why =
      absl::StrCat("generation ", generation, " ", how, ": ", reason);
  liveness_.EndGeneration(job_id, generation);
  stalls_.EndGeneration(job_id, generation);
  DeleteStoredGeneration(job_id, generation);
  kv_.DropGeneration({job_id, generation}, why);
  barriers_.DropGeneration({job_id, generation}, why);
}

void Coordinator::OnRendezvousTimedOut(const std::string& job_id,
                                       const std::string& why) {
  LogUnapplied(jobs_.Fail(job_id, why),
               absl::StrCat("the rendezvous timeout of job ", job_id));
}

void Coordinator::OnRankGone(const std::string& job_id, int64_t generation,
                             int32_t rank, const std::string& worker_id,
                             const std::string& reason) {
  LOG(INFO) << "rank " << rank << " of generation " << generation << " of job "
            << job_id << " is gone after training to the end (" << reason
            << "); the job finishes without its final report";
  LogUnapplied(jobs_.RankGone(job_id, generation, rank, worker_id, reason),
               absl::StrCat("rank ", rank, " of job ", job_id, " gone"));
}

void Coordinator::ShowWaitingFor(v1::Job& job) const {
  job.clear_waiting_for();
  if (IsJobOver(job.state())) return;
  std::optional<v1::WaitingFor> w = stalls_.Judge(job.job_id(), clock_->Now());
  if (w.has_value()) *job.mutable_waiting_for() = *std::move(w);
}

void Coordinator::OnJobFinished(const v1::Job& job) {
  // A finished job's curve is complete: saved now, not at the next flush.
  if (absl::Status s = history_.Flush(job.job_id()); !s.ok()) {
    LOG(WARNING) << "training history of job " << job.job_id()
                 << " not saved: " << s;
  }
  liveness_.EndGeneration(job.job_id(), INT64_MAX);
  stalls_.EndGeneration(job.job_id(), INT64_MAX);
  finish_line_.EndJob(job.job_id());
  DeleteStoredGeneration(job.job_id(), -1);
  const absl::Status over = JobOverError(job.job_id(), job.state());
  const std::string why(over.message());
  rendezvous_.CloseJob(job.job_id(), over);
  // After CloseJob: a watch registered from here on finds the job closed.
  watchers_.JobFinished(job.job_id(), why);
  kv_.DropJob(job.job_id(), -1, why);
  barriers_.DropJob(job.job_id(), -1, why);
  facts_.Forget(job.job_id());
  preemption_.ForgetJob(job.job_id());
  // Workers learn at their next heartbeat and go idle; the assigner lets
  // them go then, one worker at a time.
}

void Coordinator::SaveGeneration(const std::string& job_id,
                                 const Rendezvous::Generation& gen) {
  // Without the record a coordinator restart costs a restart of the job,
  // not its correctness: nothing to undo on failure.
  if (absl::Status s =
          store_->SaveGeneration(GenerationRecordOf(job_id, gen, workers_));
      !s.ok()) {
    LOG(WARNING) << "generation " << gen.number << " of job " << job_id
                 << " was not stored (a coordinator restart would restart "
                    "the job): "
                 << s;
  }
}

void Coordinator::DeleteStoredGeneration(const std::string& job_id,
                                         int64_t generation) {
  if (absl::Status s = store_->DeleteGeneration(job_id, generation); !s.ok()) {
    LOG(WARNING) << "the stored generation " << generation << " of job "
                 << job_id
                 << " was not deleted (a restarted coordinator would try to "
                    "adopt it, and its members would rejoin): "
                 << s;
  }
}

}  // namespace ringleader
