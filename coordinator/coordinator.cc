#include "coordinator/coordinator.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/quote_for_error.h"
#include "common/shard_plan.h"
#include "coordinator/report_checks.h"
#include "glog/logging.h"

namespace ringleader {
namespace {

constexpr size_t kNcclUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES.
// Extra time members of an adopted generation get for their first
// heartbeat after a coordinator restart.
constexpr absl::Duration kAdoptionGrace = absl::Seconds(2);
constexpr char kNcclKeyPrefix[] = "__ringleader/nccl_id/";

// Keys under kReservedKeyPrefix are the coordinator's (the NCCL id): a
// client that wrote one could hand the job's ranks an id of its choosing.
constexpr char kReservedKeyPrefix[] = "__ringleader/";
static_assert(std::string_view(kNcclKeyPrefix).substr(0, 13) ==
              kReservedKeyPrefix);

absl::Status CheckClientKey(const std::string& key) {
  if (absl::StartsWith(key, kReservedKeyPrefix)) {
    return absl::PermissionDeniedError(
        absl::StrCat("kv keys under ", kReservedKeyPrefix,
                     " are reserved for the coordinator"));
  }
  return absl::OkStatus();
}

// Answers a wait that never started: nothing to cancel.
template <typename Done>
Coordinator::Canceller Refuse(Done& done, absl::Status status) {
  done(std::move(status));
  return nullptr;
}

GenerationKey Gen(const std::string& job_id, int64_t generation) {
  return {job_id, generation};
}

absl::Status RequireJobId(const std::string& job_id) {
  if (job_id.empty()) return absl::InvalidArgumentError("job_id is empty");
  return absl::OkStatus();
}

absl::Status RequireWorkerId(const std::string& worker_id) {
  if (worker_id.empty()) {
    return absl::InvalidArgumentError("worker_id is empty");
  }
  return absl::OkStatus();
}

std::vector<std::string> MemberIds(const Rendezvous::Generation& gen) {
  std::vector<std::string> ids;
  ids.reserve(gen.members.size());
  for (const Rendezvous::Member& m : gen.members) ids.push_back(m.worker_id);
  return ids;
}

// The live generation, if it is still `generation` and has `rank`: the
// generation can end (and a smaller one form) between CheckMember and the
// use of its member list.
absl::StatusOr<Rendezvous::LiveRank> LiveMember(const Rendezvous& rendezvous,
                                                const std::string& job_id,
                                                int64_t generation,
                                                int32_t rank) {
  return rendezvous.LiveRankOf(job_id, generation, rank);
}

}  // namespace

Coordinator::Coordinator(CoordinatorOptions options, StateStore* store,
                         Clock* clock, TimerQueue* timers)
    : options_(options),
      store_(store),
      clock_(clock),
      timers_(timers),
      workers_(clock, {options.lease, options.heartbeat_interval,
                       options.max_workers}),
      jobs_(store, clock, options_.retention),
      rendezvous_(clock, timers),
      kv_(timers, options.kv_limits),
      barriers_(timers),
      liveness_({options.lease, options.silent_member_limit,
                 options.silent_generation_limit, options.hung_wait}) {
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
        jobs_.Fail(job_id, why).IgnoreError();  // It may have ended already.
      });
  rendezvous_.SetGoneHook([this](const std::string& job_id, int64_t gen,
                                 int32_t rank, const std::string& worker_id,
                                 const std::string& reason) {
    LOG(INFO) << "rank " << rank << " of generation " << gen << " of job "
              << job_id << " is gone after training to the end (" << reason
              << "); the job finishes without its final report";
    jobs_.RankGone(job_id, gen, rank, worker_id, reason).IgnoreError();
  });
  jobs_.SetFinishedHook([this](const v1::Job& job) { OnJobFinished(job); });
}

Coordinator::~Coordinator() = default;

absl::Status Coordinator::Start() {
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
    const v1::GenerationRecord& record = *it->second;
    by_job.erase(it);
    if (job.state() != v1::JOB_STATE_RUNNING) {
      store_->DeleteGeneration(job.job_id(), record.number()).IgnoreError();
      continue;
    }
    if (absl::Status s = AdoptGeneration(record); !s.ok()) {
      // Not adoptable after all: the members rejoin, as after a failure.
      store_->DeleteGeneration(job.job_id(), record.number()).IgnoreError();
      jobs_
          .OnGenerationEnded(job.job_id(), record.number(),
                             absl::StrCat("coordinator restarted and could "
                                          "not adopt it: ",
                                          s.message()))
          .IgnoreError();
    }
  }
  // Generations of jobs that are no longer live.
  for (const auto& [job_id, record] : by_job) {
    store_->DeleteGeneration(job_id, -1).IgnoreError();
  }
  {
    absl::MutexLock lock(&mu_);
    sweeping_ = true;
  }
  ScheduleSweep();
  return absl::OkStatus();
}

void Coordinator::Stop() {
  {
    absl::MutexLock lock(&mu_);
    sweeping_ = false;
    timers_->Cancel(sweep_timer_);
  }
  // Open watches end now, so the server's shutdown does not wait for them;
  // their workers keep their heartbeats.
  watchers_.CloseAll(absl::UnavailableError("the coordinator is stopping"));
}

void Coordinator::ScheduleSweep() {
  absl::MutexLock lock(&mu_);
  if (!sweeping_) return;
  sweep_timer_ =
      timers_->Schedule(clock_->Now() + options_.sweep_interval, [this] {
        SweepLeases();
        ScheduleSweep();
      });
}

void Coordinator::SweepLeases() {
  const absl::Time now = clock_->Now();
  std::vector<v1::WorkerInfo> gone =
      workers_.ExpireLeases([&](const v1::WorkerInfo& w, bool replaced) {
        return liveness_.Judge(w.worker_id(), now, replaced) ==
               MemberLiveness::Verdict::kKeep;
      });
  for (const v1::WorkerInfo& dead : gone) {
    OnWorkerGone(dead, absl::StrCat("worker ", dead.worker_id(), " on ",
                                    dead.hostname(), " missed its lease"));
  }
}

absl::Time Coordinator::Deadline(int64_t timeout_ms) const {
  absl::Duration wait =
      timeout_ms > 0 ? absl::Milliseconds(timeout_ms) : options_.default_wait;
  return clock_->Now() + std::min(wait, options_.max_wait);
}

absl::Status Coordinator::OpenRendezvous(const v1::Job& job) {
  Rendezvous::Config config;
  config.min_workers = job.spec().min_workers();
  config.max_workers = job.spec().max_workers();
  config.last_call = absl::Milliseconds(job.spec().rendezvous_last_call_ms());
  config.timeout = absl::Milliseconds(job.spec().rendezvous_timeout_ms());
  return rendezvous_.OpenJob(job.job_id(), config, job.generation());
}

void Coordinator::OnWorkerGone(const v1::WorkerInfo& worker,
                               const std::string& reason) {
  liveness_.Forget(worker.worker_id());
  connections_.Forget(worker.worker_id());
  if (worker.job_id().empty()) return;
  {
    absl::MutexLock lock(&mu_);
    auto it = assigned_.find(worker.job_id());
    if (it != assigned_.end()) it->second.erase(worker.worker_id());
  }
  // A rank that already sent its final report is done: its peers are only
  // finishing their own evaluation, so its exit ends nothing.
  if (jobs_.WorkerFinished(worker.job_id(), worker.worker_id())) return;
  rendezvous_.RemoveWorker(worker.job_id(), worker.worker_id(), reason);
}

void Coordinator::OnGenerationFormed(const std::string& job_id,
                                     const Rendezvous::Generation& gen) {
  absl::StatusOr<std::vector<v1::CheckpointRecord>> candidates =
      jobs_.ResumeCandidates(job_id, kResumeCandidates);
  if (!candidates.ok()) {
    // The history is unreadable: offer the last commit alone.
    absl::StatusOr<v1::Job> job = jobs_.Get(job_id);
    candidates.emplace();
    if (job.ok() && job->last_checkpoint().checkpoint_id() != 0) {
      candidates->push_back(job->last_checkpoint());
    }
  }
  {
    absl::MutexLock lock(&mu_);
    GenerationInfo& info = generations_[job_id];
    // The rendezvous runs this hook outside its lock: a newer generation's
    // can have run first. Its resume choice and stored record must stay.
    if (info.number > gen.number) return;
    info = GenerationInfo();
    info.number = gen.number;
    info.resume_candidates = *std::move(candidates);
  }
  liveness_.StartGeneration(job_id, gen.number, MemberIds(gen), clock_->Now());
  finish_line_.StartGeneration(job_id, gen.number, MemberIds(gen));
  SaveGeneration(job_id, gen);
  // State left by generations that ended is of no use to anyone.
  kv_.DropJob(job_id, gen.number, "generation ended");
  barriers_.DropJob(job_id, gen.number, "generation ended");
  jobs_
      .OnGenerationFormed(job_id, gen.number,
                          static_cast<int32_t>(gen.members.size()))
      .IgnoreError();  // The job may have been cancelled meanwhile.
}

void Coordinator::SaveGeneration(const std::string& job_id,
                                 const Rendezvous::Generation& gen) {
  v1::GenerationRecord record;
  record.set_job_id(job_id);
  record.set_number(gen.number);
  for (const Rendezvous::Member& m : gen.members) {
    v1::WorkerInfo* w = record.add_members();
    absl::StatusOr<v1::WorkerInfo> info = workers_.Get(m.worker_id);
    if (info.ok()) *w = *std::move(info);
    w->set_worker_id(m.worker_id);
    w->set_hostname(m.hostname);
    w->set_address(m.address);
    w->set_job_id(job_id);
    absl::StatusOr<v1::MemberSecret> secret = workers_.Secret(m.worker_id);
    *record.add_secrets() =
        secret.ok() ? *std::move(secret) : v1::MemberSecret();
  }
  // Without the record a coordinator restart costs a restart of the job,
  // not its correctness: nothing to do on failure.
  store_->SaveGeneration(record).IgnoreError();
}

absl::Status Coordinator::AdoptGeneration(const v1::GenerationRecord& record) {
  Rendezvous::Generation gen;
  gen.number = record.number();
  for (int i = 0; i < record.members_size(); ++i) {
    const v1::WorkerInfo& w = record.members(i);
    Rendezvous::Member m;
    m.worker_id = w.worker_id();
    m.hostname = w.hostname();
    m.address = w.address();
    m.rank = i;
    gen.members.push_back(std::move(m));
  }
  if (absl::Status s = rendezvous_.RestoreGeneration(record.job_id(), gen);
      !s.ok()) {
    return s;
  }
  // Its members are heard from now on, as if they had just joined.
  liveness_.StartGeneration(record.job_id(), gen.number, MemberIds(gen),
                            clock_->Now());
  finish_line_.StartGeneration(record.job_id(), gen.number, MemberIds(gen));
  absl::MutexLock lock(&mu_);
  for (int i = 0; i < record.members_size(); ++i) {
    const v1::WorkerInfo& w = record.members(i);
    // A member that does not heartbeat in time expires, and that ends the
    // generation as any death does. Its first lease covers the reconnect of
    // a worker's channel (its backoff is capped at 1 s) on top of the usual.
    // Its token comes back with it (a record without one: it registers
    // again, and the generation ends as if it had died).
    workers_
        .Restore(
            w, options_.lease + kAdoptionGrace,
            i < record.secrets_size() ? record.secrets(i) : v1::MemberSecret())
        .IgnoreError();
    assigned_[record.job_id()].insert(w.worker_id());
  }
  GenerationInfo& info = generations_[record.job_id()];
  info = GenerationInfo();
  info.number = record.number();
  // Its ranks resumed (if at all) before the restart and will ask for later
  // epochs only, which start at offset 0: no resume candidates are needed.
  return absl::OkStatus();
}

void Coordinator::DropGeneration(const std::string& job_id, int64_t generation,
                                 const std::string& why) {
  liveness_.EndGeneration(job_id, generation);
  store_->DeleteGeneration(job_id, generation).IgnoreError();
  kv_.DropGeneration(Gen(job_id, generation), why);
  barriers_.DropGeneration(Gen(job_id, generation), why);
}

void Coordinator::OnGenerationEnded(const std::string& job_id,
                                    int64_t generation,
                                    const std::string& reason) {
  // First: the members' notice must not wait for the store's writes (a
  // heartbeat answered meanwhile would beat it by those milliseconds).
  PushGenerationEnd(job_id, generation, reason);
  DropGeneration(job_id, generation,
                 absl::StrCat("generation ", generation, " ended: ", reason));
  jobs_.OnGenerationEnded(job_id, generation, reason).IgnoreError();
}

void Coordinator::OnGenerationResized(const std::string& job_id,
                                      int64_t generation,
                                      const std::string& reason) {
  PushGenerationEnd(job_id, generation, reason);  // First, as above.
  DropGeneration(job_id, generation,
                 absl::StrCat("generation ", generation, " resized: ", reason));
  jobs_.OnGenerationResized(job_id, generation, reason).IgnoreError();
}

void Coordinator::PushGenerationEnd(const std::string& job_id,
                                    int64_t generation,
                                    const std::string& reason) {
  // The bench and the logs time the members' notice from this line.
  LOG(INFO) << "generation " << generation << " of job " << job_id << " ended ("
            << reason << "); telling its watching members";
  watchers_.Ended(job_id, generation,
                  absl::StrCat("generation ", generation, " ended: ", reason),
                  /*rejoin=*/true);
}

void Coordinator::OnJobFinished(const v1::Job& job) {
  liveness_.EndGeneration(job.job_id(), INT64_MAX);
  finish_line_.EndJob(job.job_id());
  store_->DeleteGeneration(job.job_id(), -1).IgnoreError();
  const std::string why = absl::StrCat("job ", job.job_id(), " is ",
                                       v1::JobState_Name(job.state()));
  rendezvous_.CloseJob(job.job_id(), absl::FailedPreconditionError(why));
  // After CloseJob: a watch registered from here on finds the job closed.
  watchers_.JobFinished(job.job_id(), why);
  kv_.DropJob(job.job_id(), -1, why);
  barriers_.DropJob(job.job_id(), -1, why);
  absl::MutexLock lock(&mu_);
  generations_.erase(job.job_id());
  // Workers learn at their next heartbeat and go idle; assigned_ is cleared
  // then, one worker at a time.
}

absl::Status Coordinator::CheckMember(const std::string& job_id,
                                      int64_t generation, int32_t rank) {
  if (absl::Status s = RequireJobId(job_id); !s.ok()) return s;
  absl::Status s = rendezvous_.CheckMember(job_id, generation, rank);
  if (absl::IsNotFound(s)) {
    absl::StatusOr<v1::Job> job = jobs_.Get(job_id);
    if (!job.ok()) return job.status();
    return absl::FailedPreconditionError(
        absl::StrCat("job ", QuoteForError(job_id), " is ",
                     v1::JobState_Name(job->state())));
  }
  return s;
}

absl::Status Coordinator::CheckRank(const Caller& caller,
                                    const std::string& job_id,
                                    int64_t generation, int32_t rank) {
  if (absl::Status s = CheckMember(job_id, generation, rank); !s.ok()) {
    return s;
  }
  return CheckRankHolder(caller, job_id, generation, rank);
}

absl::Status Coordinator::CheckGeneration(const Caller& caller,
                                          const std::string& job_id,
                                          int64_t generation) {
  if (absl::Status s = CheckMember(job_id, generation, 0); !s.ok()) return s;
  return CheckGenerationCaller(caller, job_id, generation);
}

int64_t Coordinator::TrainSize(const std::string& job_id, int64_t generation) {
  absl::MutexLock lock(&mu_);
  auto it = generations_.find(job_id);
  if (it == generations_.end() || it->second.number != generation) return -1;
  return it->second.dataset_size[0];
}

void Coordinator::NoteStep(const std::string& job_id, int64_t generation,
                           const std::string& worker_id, int64_t step,
                           int64_t total_steps) {
  if (finish_line_.Reached(job_id, generation, worker_id, step, total_steps)) {
    LOG(INFO) << "generation " << generation << " of job " << job_id
              << " trained to its last step on every rank";
    rendezvous_.Advance(job_id, generation, Rendezvous::Stage::kTrained);
  }
}

bool Coordinator::FinalReportSettled(const Caller& caller,
                                     const v1::ReportProgressRequest& r) {
  absl::StatusOr<std::string> sender =
      jobs_.FinalReporter(r.job_id(), r.generation(), r.rank());
  if (!sender.ok()) return false;
  const std::string* token = caller.TokenOf(*sender);
  return token != nullptr &&
         workers_.AuthenticateRecent(*sender, *token, caller.peer_identity)
             .ok();
}

// ---- WorkerService ----

absl::StatusOr<v1::RegisterResponse> Coordinator::Register(
    const Caller& caller, const v1::RegisterRequest& r) {
  // A process registering again carries its previous credential: the same
  // process keeps its worker id (WorkerRegistry::Register).
  std::optional<WorkerRegistry::Credential> previous;
  if (caller.tokens.size() == 1) previous.emplace(*caller.tokens.begin());
  absl::StatusOr<WorkerRegistry::Registration> reg = workers_.Register(
      r, caller.peer_identity, previous ? &*previous : nullptr);
  if (!reg.ok()) return reg.status();
  if (reg->kept_id) {
    LOG(INFO) << "worker " << reg->response.worker_id() << " on "
              << r.hostname() << " registered again (same process)";
  }
  for (const v1::WorkerInfo& old : reg->replaced) {
    OnWorkerGone(
        old, absl::StrCat("worker ", old.worker_id(), " registered again as ",
                          reg->response.worker_id()));
  }
  if (!r.resume_job_id().empty()) {
    AssignAgain(reg->response.worker_id(), r.resume_job_id());
  }
  return reg->response;
}

absl::StatusOr<v1::HeartbeatResponse> Coordinator::Heartbeat(
    const Caller& caller, const v1::HeartbeatRequest& r) {
  if (absl::Status s = RequireWorkerId(r.worker_id()); !s.ok()) return s;
  if (absl::Status s = CheckWorkerCaller(caller, r.worker_id()); !s.ok()) {
    return s;
  }
  if (r.generation() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("heartbeat: generation must be >= 0 (0: not joined), got ",
                     r.generation()));
  }
  absl::StatusOr<v1::WorkerInfo> worker = workers_.Heartbeat(r.worker_id());
  if (!worker.ok()) return worker.status();
  connections_.Heard(r.worker_id(), caller.peer_address, clock_->Now());
  if (r.job_id() == worker->job_id() && r.generation() > 0) {
    liveness_.Heard(
        r.worker_id(), r.generation(), r.step(), clock_->Now(),
        absl::Milliseconds(std::max<int64_t>(r.collective_wait_ms(), 0)));
    NoteStep(r.job_id(), r.generation(), r.worker_id(), r.step());
  } else if (!worker->job_id().empty() &&
             rendezvous_.IsLiveMember(worker->job_id(), r.worker_id())) {
    // A member done with its part (it sent its final report and went
    // idle) still shows that our link to the generation's hosts works: a
    // peer silent meanwhile is judged as one silent among heard ones.
    liveness_.Heard(r.worker_id(), rendezvous_.LastGeneration(worker->job_id()),
                    /*step=*/0, clock_->Now());
  }
  return Directive(*worker, r);
}

v1::HeartbeatResponse Coordinator::Directive(const v1::WorkerInfo& worker,
                                             const v1::HeartbeatRequest& r) {
  v1::HeartbeatResponse out;
  out.set_lease_ms(absl::ToInt64Milliseconds(options_.lease));
  if (!worker.job_id().empty()) {
    absl::StatusOr<v1::Job> job = jobs_.Get(worker.job_id());
    if (!job.ok() || IsTerminal(job->state())) {
      // Done with this job: release the worker.
      workers_.SetJob(worker.worker_id(), "").IgnoreError();
      {
        absl::MutexLock lock(&mu_);
        auto it = assigned_.find(worker.job_id());
        if (it != assigned_.end()) {
          it->second.erase(worker.worker_id());
          if (it->second.empty()) assigned_.erase(it);
        }
      }
      v1::GenerationAbort* abort = out.mutable_abort();
      abort->set_job_id(worker.job_id());
      abort->set_generation(r.generation());
      abort->set_rejoin(false);
      abort->set_reason(
          job.ok() ? absl::StrCat("job is ", v1::JobState_Name(job->state()))
                   : "job no longer exists");
      return out;
    }
    if (r.job_id() != worker.job_id() || r.generation() == 0) {
      // Not joined yet (or the first answer was lost): say it again. Not to
      // a member of the live generation (one that sent its final report is
      // done, and the job releases it when it ends; one whose report is
      // still on its way would end its own generation by joining again),
      // nor to one that is waiting already.
      if (!rendezvous_.IsWaiting(worker.job_id(), worker.worker_id()) &&
          !rendezvous_.IsLiveMember(worker.job_id(), worker.worker_id()) &&
          !jobs_.WorkerFinished(worker.job_id(), worker.worker_id())) {
        v1::JobAssignment* a = out.mutable_assignment();
        a->set_job_id(job->job_id());
        *a->mutable_spec() = job->spec();
      }
      return out;
    }
    absl::Status member =
        rendezvous_.CheckMember(worker.job_id(), r.generation(), 0);
    if (absl::IsAborted(member) &&
        !rendezvous_.IsWaiting(worker.job_id(), worker.worker_id())) {
      v1::GenerationAbort* abort = out.mutable_abort();
      abort->set_job_id(worker.job_id());
      abort->set_generation(r.generation());
      abort->set_rejoin(true);
      abort->set_reason(std::string(member.message()));
    }
    return out;
  }
  if (r.generation() > 0 &&
      !rendezvous_.IsLiveMember(r.job_id(), worker.worker_id())) {
    // It still trains in a generation that goes on without it (it was
    // counted out, registered again, and its job took it no more): it
    // stops, and hears of work at its next heartbeat.
    v1::GenerationAbort* abort = out.mutable_abort();
    abort->set_job_id(r.job_id());
    abort->set_generation(r.generation());
    abort->set_rejoin(false);
    abort->set_reason(absl::StrCat("worker ", worker.worker_id(),
                                   " is not in generation ", r.generation(),
                                   " of job ", QuoteForError(r.job_id())));
    return out;
  }
  // Idle: give it the oldest job that still wants workers.
  for (const v1::Job& job : jobs_.Active()) {
    const Take took = TakeWorker(worker.worker_id(), job);
    if (took == Take::kNoRoom) continue;
    if (took == Take::kTaken) {
      v1::JobAssignment* a = out.mutable_assignment();
      a->set_job_id(job.job_id());
      *a->mutable_spec() = job.spec();
    }
    break;
  }
  return out;
}

bool Coordinator::Finishing(const v1::Job& job) {
  for (const v1::RankProgress& r : job.progress().ranks()) {
    if (r.finished()) return true;
  }
  return false;
}

void Coordinator::AssignAgain(const std::string& worker_id,
                              const std::string& job_id) {
  absl::StatusOr<v1::Job> job = jobs_.Get(job_id);
  // A job that is over or gone: the worker finds out when it joins.
  if (!job.ok() || IsTerminal(job->state())) return;
  if (rendezvous_.IsLiveMember(job_id, worker_id)) {
    // Still a member (its generation trained to the end, so a verdict
    // against it ended nothing): it is back in its place, whatever the
    // room for newcomers, and the job waits for its final report again.
    if (!workers_.SetJob(worker_id, job_id).ok()) return;
    {
      absl::MutexLock lock(&mu_);
      assigned_[job_id].insert(worker_id);
    }
    if (const int32_t rank = rendezvous_.Returned(job_id, worker_id);
        rank >= 0) {
      LOG(INFO) << "worker " << worker_id << " (rank " << rank << " of job "
                << job_id << ") is back; its final report counts again";
      jobs_.RankBack(job_id, job->generation(), rank).IgnoreError();
    }
    return;
  }
  TakeWorker(worker_id, *job);
}

Coordinator::Take Coordinator::TakeWorker(const std::string& worker_id,
                                          const v1::Job& job) {
  // A generation that trained to its last step (or some rank of which
  // finished) is ending: a worker it took now would only find the job over
  // when it joins.
  if (Finishing(job) ||
      rendezvous_.StageOf(job.job_id()) != Rendezvous::Stage::kTraining) {
    return Take::kNoRoom;
  }
  absl::MutexLock lock(&mu_);
  auto& set = assigned_[job.job_id()];
  if (static_cast<int32_t>(set.size()) >= job.spec().max_workers()) {
    return Take::kNoRoom;
  }
  if (!workers_.SetJob(worker_id, job.job_id()).ok()) return Take::kWorkerGone;
  set.insert(worker_id);
  return Take::kTaken;
}

Coordinator::Canceller Coordinator::JoinRendezvous(
    const Caller& caller, const v1::JoinRendezvousRequest& r,
    Reply<v1::JoinRendezvousResponse> done) {
  if (absl::Status s = RequireJobId(r.job_id()); !s.ok()) {
    return Refuse(done, s);
  }
  if (absl::Status s = RequireWorkerId(r.worker_id()); !s.ok()) {
    return Refuse(done, s);
  }
  if (absl::Status s = CheckWorkerCaller(caller, r.worker_id()); !s.ok()) {
    return Refuse(done, s);
  }
  absl::StatusOr<v1::WorkerInfo> worker = workers_.Get(r.worker_id());
  if (!worker.ok()) return Refuse(done, worker.status());
  if (absl::StatusOr<v1::Job> job = jobs_.Get(r.job_id()); !job.ok()) {
    return Refuse(done, job.status());
  }
  if (worker->job_id() != r.job_id()) {
    return Refuse(done,
                  absl::FailedPreconditionError(absl::StrCat(
                      "worker ", QuoteForError(r.worker_id()),
                      " is not assigned to job ", QuoteForError(r.job_id()),
                      "; wait for an assignment in a heartbeat")));
  }
  if (absl::Status s = jobs_.OnJoin(r.job_id()); !s.ok()) {
    return Refuse(done, s);
  }
  Rendezvous::Member member;
  member.worker_id = worker->worker_id();
  member.hostname = worker->hostname();
  member.address = worker->address();
  member.keeps_state = r.keeps_state();
  const std::string worker_id = worker->worker_id();
  const uint64_t waiter = rendezvous_.Join(
      r.job_id(), member, Deadline(r.timeout_ms()),
      [this, job_id = r.job_id(), worker_id,
       include_members = r.include_members(), done = std::move(done)](
          const absl::StatusOr<Rendezvous::Generation>& gen) {
        if (!gen.ok()) return done(gen.status());
        v1::JoinRendezvousResponse out;
        out.set_generation(gen->number);
        out.set_world_size(static_cast<int32_t>(gen->members.size()));
        std::string host;
        for (const Rendezvous::Member& m : gen->members) {
          if (m.worker_id == worker_id) host = m.hostname;
        }
        for (const Rendezvous::Member& m : gen->members) {
          // The ranks sharing the worker's CPUs (its loader threads' share).
          if (m.hostname == host) out.set_host_ranks(out.host_ranks() + 1);
          if (m.worker_id == worker_id) out.set_rank(m.rank);
          // Every member list in every response is O(n^2) bytes for the
          // rendezvous: only for callers that ask.
          if (!include_members) continue;
          v1::RendezvousMember* pm = out.add_members();
          pm->set_rank(m.rank);
          pm->set_worker_id(m.worker_id);
          pm->set_hostname(m.hostname);
          pm->set_address(m.address);
        }
        absl::StatusOr<v1::Job> job = jobs_.Get(job_id);
        if (!job.ok()) return done(job.status());
        *out.mutable_spec() = job->spec();
        out.set_job_restarts(job->restarts());
        {
          absl::MutexLock lock(&mu_);
          auto it = generations_.find(job_id);
          if (it != generations_.end() && it->second.number == gen->number) {
            for (const v1::CheckpointRecord& c : it->second.resume_candidates) {
              *out.add_resume_candidates() = c;
            }
            if (!it->second.resume_candidates.empty()) {
              *out.mutable_resume_from() = it->second.resume_candidates[0];
            }
          }
        }
        done(std::move(out));
      });
  if (waiter == 0) return nullptr;
  GrowForNewcomer(r.job_id());
  return [this, job_id = r.job_id(), worker_id, waiter] {
    rendezvous_.CancelJoin(job_id, worker_id, waiter);
  };
}

void Coordinator::GrowForNewcomer(const std::string& job_id) {
  const int64_t live = rendezvous_.GrowableKeepingState(job_id);
  if (live == 0) return;  // Its next checkpoint commit takes the newcomer.
  absl::StatusOr<v1::Job> job = jobs_.Get(job_id);
  // Once training is over only the final evaluation is left.
  if (!job.ok() || (job->progress().total_steps() > 0 &&
                    job->progress().step() >= job->progress().total_steps())) {
    return;
  }
  rendezvous_.Grow(job_id, live);
}

absl::Status Coordinator::KvSet(const Caller& caller,
                                const v1::KvSetRequest& r) {
  if (absl::Status s = CheckGeneration(caller, r.job_id(), r.generation());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckClientKey(r.key()); !s.ok()) return s;
  return kv_.Set(Gen(r.job_id(), r.generation()), r.key(), r.value());
}

absl::StatusOr<v1::KvGetResponse> Coordinator::KvGet(
    const Caller& caller, const v1::KvGetRequest& r) {
  if (absl::Status s = CheckGeneration(caller, r.job_id(), r.generation());
      !s.ok()) {
    return s;
  }
  v1::KvGetResponse out;
  absl::StatusOr<std::string> v =
      kv_.Get(Gen(r.job_id(), r.generation()), r.key());
  if (v.ok()) {
    out.set_found(true);
    out.set_value(*std::move(v));
  } else if (!absl::IsNotFound(v.status())) {
    return v.status();
  }
  return out;
}

Coordinator::Canceller Coordinator::KvWait(const Caller& caller,
                                           const v1::KvWaitRequest& r,
                                           Reply<v1::KvWaitResponse> done) {
  if (absl::Status s = CheckGeneration(caller, r.job_id(), r.generation());
      !s.ok()) {
    return Refuse(done, s);
  }
  if (r.keys_size() > 4096) {
    return Refuse(done,
                  absl::InvalidArgumentError("kv wait names over 4096 keys"));
  }
  const GenerationKey gen = Gen(r.job_id(), r.generation());
  const KvStore::WaitId id =
      kv_.Wait(gen, std::vector<std::string>(r.keys().begin(), r.keys().end()),
               Deadline(r.timeout_ms()),
               [done = std::move(done)](
                   absl::StatusOr<std::vector<std::string>> values) {
                 if (!values.ok()) return done(values.status());
                 v1::KvWaitResponse out;
                 for (std::string& v : *values) out.add_values(std::move(v));
                 done(std::move(out));
               });
  return CancelKvWait(gen, id);
}

Coordinator::Canceller Coordinator::CancelKvWait(const GenerationKey& gen,
                                                 KvStore::WaitId id) {
  if (id == KvStore::kNoWait) return nullptr;
  return [this, gen, id] { kv_.CancelWait(gen, id); };
}

absl::StatusOr<v1::KvAddResponse> Coordinator::KvAdd(
    const Caller& caller, const v1::KvAddRequest& r) {
  if (absl::Status s = CheckGeneration(caller, r.job_id(), r.generation());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckClientKey(r.key()); !s.ok()) return s;
  absl::StatusOr<int64_t> v =
      kv_.Add(Gen(r.job_id(), r.generation()), r.key(), r.delta());
  if (!v.ok()) return v.status();
  v1::KvAddResponse out;
  out.set_value(*v);
  return out;
}

absl::Status Coordinator::PublishNcclId(const Caller& caller,
                                        const v1::PublishNcclIdRequest& r) {
  if (absl::Status s = CheckRank(caller, r.job_id(), r.generation(), r.rank());
      !s.ok()) {
    return s;
  }
  if (r.rank() != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("only rank 0 publishes the NCCL id, not rank ", r.rank()));
  }
  if (r.unique_id().size() != kNcclUniqueIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("an NCCL unique id is ", kNcclUniqueIdBytes,
                     " bytes, got ", r.unique_id().size()));
  }
  if (r.comm_index() < 0) {
    return absl::InvalidArgumentError("comm_index must be >= 0");
  }
  // Create: atomic (two publishers cannot both succeed) and outside the
  // job's key quota (a space full of its own keys cannot stop NCCL).
  absl::Status s =
      kv_.Create(Gen(r.job_id(), r.generation()),
                 absl::StrCat(kNcclKeyPrefix, r.comm_index()), r.unique_id());
  if (absl::IsAlreadyExists(s)) {
    return absl::AlreadyExistsError(absl::StrCat("the NCCL id of communicator ",
                                                 r.comm_index(),
                                                 " is already published"));
  }
  return s;
}

Coordinator::Canceller Coordinator::FetchNcclId(
    const Caller& caller, const v1::FetchNcclIdRequest& r,
    Reply<v1::FetchNcclIdResponse> done) {
  if (absl::Status s = CheckRank(caller, r.job_id(), r.generation(), r.rank());
      !s.ok()) {
    return Refuse(done, s);
  }
  if (r.comm_index() < 0) {
    return Refuse(done, absl::InvalidArgumentError("comm_index must be >= 0"));
  }
  const GenerationKey gen = Gen(r.job_id(), r.generation());
  const KvStore::WaitId id =
      kv_.Wait(gen, {absl::StrCat(kNcclKeyPrefix, r.comm_index())},
               Deadline(r.timeout_ms()),
               [done = std::move(done)](
                   absl::StatusOr<std::vector<std::string>> values) {
                 if (!values.ok()) return done(values.status());
                 v1::FetchNcclIdResponse out;
                 out.set_unique_id(std::move((*values)[0]));
                 done(std::move(out));
               });
  return CancelKvWait(gen, id);
}

Coordinator::Canceller Coordinator::Barrier(
    const Caller& caller, const v1::BarrierRequest& r,
    std::function<void(absl::Status)> done) {
  if (absl::Status s = CheckRank(caller, r.job_id(), r.generation(), r.rank());
      !s.ok()) {
    return Refuse(done, s);
  }
  absl::StatusOr<Rendezvous::LiveRank> live =
      LiveMember(rendezvous_, r.job_id(), r.generation(), r.rank());
  if (!live.ok()) return Refuse(done, live.status());
  const GenerationKey gen = Gen(r.job_id(), r.generation());
  const uint64_t round =
      barriers_.Arrive(gen, r.name(), r.rank(), live->world_size,
                       Deadline(r.timeout_ms()), std::move(done));
  if (round == 0) return nullptr;
  return [this, gen, name = r.name(), round, rank = r.rank()] {
    barriers_.Cancel(gen, name, round, rank);
  };
}

absl::StatusOr<const v1::CheckpointRecord*> Coordinator::ResumeChoiceLocked(
    GenerationInfo& info, const std::string& job_id, int64_t generation,
    int32_t rank, int64_t resume_checkpoint_id) {
  const std::vector<v1::CheckpointRecord>& c = info.resume_candidates;
  if (c.empty()) return nullptr;
  int index = 0;  // 0 names no checkpoint: a worker that predates the
                  // candidates resumed from the first.
  if (resume_checkpoint_id != 0) {
    index = -1;
    for (size_t i = 0; i < c.size(); ++i) {
      if (c[i].checkpoint_id() == resume_checkpoint_id) index = i;
    }
    if (index < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "checkpoint ", resume_checkpoint_id, " is not one generation ",
          generation, " may resume from"));
    }
  }
  if (info.resumed < 0) {
    // The first rank to say fixes the choice. The newer candidates were
    // unreadable to every rank (each loads the first it can read, and they
    // checked that they agree). Done under mu_ so that no commit overtakes
    // the job's last_checkpoint going back.
    if (absl::Status s = jobs_.ResumedFrom(
            job_id, c[index],
            std::vector<v1::CheckpointRecord>(c.begin(), c.begin() + index));
        !s.ok()) {
      return s;
    }
    info.resumed = index;
  } else if (info.resumed != index) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rank ", rank, " resumed from checkpoint ", c[index].checkpoint_id(),
        " but another rank from ", c[info.resumed].checkpoint_id(),
        ": every rank must read the same checkpoint"));
  }
  return &c[index];
}

absl::Status Coordinator::NoteDatasetSizeLocked(GenerationInfo& info,
                                                bool test_split, int32_t rank,
                                                int64_t dataset_size) {
  int64_t& size = info.dataset_size[test_split ? 1 : 0];
  if (size < 0) size = dataset_size;
  if (size != dataset_size) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rank ", rank, " sees ", dataset_size, " samples but another rank saw ",
        size, ": every worker needs the same dataset"));
  }
  return absl::OkStatus();
}

absl::Status Coordinator::NoteTrainingFacts(const std::string& job_id,
                                            int64_t generation, int32_t rank,
                                            int64_t train_size,
                                            int64_t resumed_checkpoint_id) {
  if (train_size < 0) {
    return absl::InvalidArgumentError("train_size must be >= 0");
  }
  absl::MutexLock lock(&mu_);
  auto it = generations_.find(job_id);
  // Another generation's facts (one formed since the caller's check): the
  // caller's call fails on its generation anyway.
  if (it == generations_.end() || it->second.number != generation) {
    return absl::OkStatus();
  }
  GenerationInfo& info = it->second;
  if (train_size > 0) {
    if (absl::Status s = NoteDatasetSizeLocked(info, false, rank, train_size);
        !s.ok()) {
      return s;
    }
  }
  if (resumed_checkpoint_id == 0) return absl::OkStatus();
  if (info.resume_candidates.empty() && info.resumed < 0 &&
      !RecallOfferLocked(info, job_id, resumed_checkpoint_id)) {
    return absl::OkStatus();
  }
  return ResumeChoiceLocked(info, job_id, generation, rank,
                            resumed_checkpoint_id)
      .status();
}

bool Coordinator::RecallOfferLocked(GenerationInfo& info,
                                    const std::string& job_id,
                                    int64_t resumed_checkpoint_id) {
  // A generation adopted after a coordinator restart kept no offer. Until
  // one of its commits went through (or its choice moved the job back), the
  // job offers what the generation was offered when it formed: the choice
  // can still be applied, or its first commit, older than the unreadable
  // checkpoint it skipped, would be refused.
  absl::StatusOr<v1::Job> job = jobs_.Get(job_id);
  if (!job.ok() || job->last_checkpoint().generation() >= info.number ||
      job->last_checkpoint().checkpoint_id() == resumed_checkpoint_id) {
    return false;
  }
  absl::StatusOr<std::vector<v1::CheckpointRecord>> offer =
      jobs_.ResumeCandidates(job_id, kResumeCandidates);
  if (!offer.ok()) return false;
  for (const v1::CheckpointRecord& c : *offer) {
    if (c.checkpoint_id() == resumed_checkpoint_id) {
      info.resume_candidates = *std::move(offer);
      return true;
    }
  }
  return false;  // Chosen before the restart, and the job moved on since.
}

absl::StatusOr<v1::ShardAssignment> Coordinator::GetShard(
    const Caller& caller, const v1::GetShardRequest& r) {
  if (absl::Status s = CheckRank(caller, r.job_id(), r.generation(), r.rank());
      !s.ok()) {
    return s;
  }
  if (r.epoch() < 0) return absl::InvalidArgumentError("epoch must be >= 0");
  if (r.dataset_size() <= 0) {
    return absl::InvalidArgumentError("dataset_size must be > 0");
  }
  absl::StatusOr<v1::Job> job = jobs_.Get(r.job_id());
  if (!job.ok()) return job.status();
  if (r.epoch() >= job->spec().epochs()) {
    return absl::OutOfRangeError(absl::StrCat("epoch ", r.epoch(),
                                              " is past the job's ",
                                              job->spec().epochs(), " epochs"));
  }
  ShardPlanInput plan;
  plan.epoch = r.epoch();
  plan.rank = r.rank();
  plan.dataset_size = r.dataset_size();
  plan.test_split = r.test_split();
  {
    absl::MutexLock lock(&mu_);
    GenerationInfo& info = generations_[r.job_id()];
    if (absl::Status s = NoteDatasetSizeLocked(info, r.test_split(), r.rank(),
                                               r.dataset_size());
        !s.ok()) {
      return s;
    }
    if (!r.test_split()) {
      absl::StatusOr<const v1::CheckpointRecord*> resume = ResumeChoiceLocked(
          info, r.job_id(), r.generation(), r.rank(), r.resume_checkpoint_id());
      if (!resume.ok()) return resume.status();
      if (*resume != nullptr) {
        plan.resume = {(*resume)->epoch(), (*resume)->epoch_sample_offset()};
      }
    }
  }
  absl::StatusOr<Rendezvous::LiveRank> live =
      LiveMember(rendezvous_, r.job_id(), r.generation(), r.rank());
  if (!live.ok()) return live.status();
  plan.world_size = live->world_size;
  // The workers plan their shards with the same function (common/
  // shard_plan.h); this answer is for tools and tests.
  return PlanShard(job->spec(), plan);
}

absl::Status Coordinator::ReportProgress(const Caller& caller,
                                         const v1::ReportProgressRequest& r) {
  if (absl::Status s = CheckRank(caller, r.job_id(), r.generation(), r.rank());
      !s.ok()) {
    // A final report whose answer was lost (the coordinator did not answer
    // in time, or restarted) is sent again, and may find the job over
    // because it counted: the same answer as the first time.
    if (r.finished() && r.fatal_error().empty() &&
        FinalReportSettled(caller, r)) {
      return absl::OkStatus();
    }
    return s;
  }
  if (!r.fatal_error().empty()) {
    if (r.fatal_error().size() > 4096) {
      return absl::InvalidArgumentError("fatal_error must be <= 4096 bytes");
    }
    return jobs_.Fail(r.job_id(),
                      absl::StrCat("rank ", r.rank(), ": ", r.fatal_error()));
  }
  if (absl::Status s = NoteTrainingFacts(r.job_id(), r.generation(), r.rank(),
                                         r.train_size(), 0);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<v1::Job> job = jobs_.Get(r.job_id());
  if (!job.ok()) return job.status();
  if (absl::Status s = CheckProgressNumbers(
          job->spec(), TrainSize(r.job_id(), r.generation()), r);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<Rendezvous::LiveRank> live =
      LiveMember(rendezvous_, r.job_id(), r.generation(), r.rank());
  if (!live.ok()) return live.status();
  // Before the report is recorded: from here on nothing ends a generation
  // some rank of which finished, so no verdict between the two can.
  if (r.finished()) {
    rendezvous_.Advance(r.job_id(), r.generation(),
                        Rendezvous::Stage::kFinishing);
  }
  NoteStep(r.job_id(), r.generation(), live->member.worker_id, r.step(),
           r.total_steps());
  return jobs_.ReportProgress(r, live->member.worker_id);
}

absl::StatusOr<v1::CommitCheckpointResponse> Coordinator::CommitCheckpoint(
    const Caller& caller, const v1::CommitCheckpointRequest& r) {
  if (absl::Status s = CheckRank(caller, r.job_id(), r.generation(), r.rank());
      !s.ok()) {
    return s;
  }
  if (r.rank() != 0) {
    return absl::PermissionDeniedError("only rank 0 commits checkpoints");
  }
  if (r.path().empty() || r.path().size() > 4096) {
    return absl::InvalidArgumentError("checkpoint path must be 1..4096 bytes");
  }
  if (r.epoch() < 0 || r.step() < 0 || r.epoch_sample_offset() < 0) {
    return absl::InvalidArgumentError(
        "checkpoint epoch, step and offset must be >= 0");
  }
  // Before the range checks, which need the training split's size, and the
  // commit, which must follow the checkpoint the generation resumed from.
  if (absl::Status s =
          NoteTrainingFacts(r.job_id(), r.generation(), r.rank(),
                            r.train_size(), r.resumed_checkpoint_id());
      !s.ok()) {
    return s;
  }
  if (absl::StatusOr<v1::Job> job = jobs_.Get(r.job_id()); !job.ok()) {
    return job.status();
  } else if (absl::Status s = CheckCommitNumbers(
                 job->spec(), TrainSize(r.job_id(), r.generation()), r);
             !s.ok()) {
    return s;
  }
  v1::CheckpointRecord record;
  record.set_generation(r.generation());
  record.set_epoch(r.epoch());
  record.set_step(r.step());
  record.set_epoch_sample_offset(r.epoch_sample_offset());
  record.set_path(r.path());
  absl::StatusOr<v1::CheckpointRecord> committed =
      jobs_.CommitCheckpoint(r.job_id(), record);
  if (!committed.ok()) return committed.status();
  v1::CommitCheckpointResponse out;
  out.set_checkpoint_id(committed->checkpoint_id());
  // Workers waiting to join a smaller generation get in here, where the
  // generation loses no work; after the last epoch only evaluation is left.
  // A commit written in the background arrives after the ranks trained past
  // it: ending there would throw those steps away, so rank 0 is told instead
  // and writes its next checkpoint on the training thread, where it ends.
  absl::StatusOr<v1::Job> job = jobs_.Get(r.job_id());
  if (job.ok() && committed->epoch() < job->spec().epochs()) {
    if (r.trained_past()) {
      out.set_scale_up_pending(
          rendezvous_.WantsToGrow(r.job_id(), r.generation()));
    } else {
      out.set_generation_ended(rendezvous_.Grow(r.job_id(), r.generation()));
    }
  }
  return out;
}

absl::Status Coordinator::Leave(const Caller& caller,
                                const v1::LeaveRequest& r) {
  if (absl::Status s = RequireWorkerId(r.worker_id()); !s.ok()) return s;
  if (absl::Status s = CheckWorkerCaller(caller, r.worker_id()); !s.ok()) {
    return s;
  }
  absl::StatusOr<v1::WorkerInfo> gone = workers_.Remove(r.worker_id());
  if (!gone.ok()) return gone.status();
  OnWorkerGone(*gone,
               absl::StrCat("worker ", QuoteForError(r.worker_id()), " left",
                            r.reason().empty() ? "" : ": ", r.reason()));
  return absl::OkStatus();
}

// ---- UserService ----

absl::StatusOr<v1::SubmitJobResponse> Coordinator::SubmitJob(
    const v1::SubmitJobRequest& r) {
  absl::StatusOr<v1::Job> job = jobs_.Submit(r.spec());
  if (!job.ok()) return job.status();
  if (absl::Status s = OpenRendezvous(*job); !s.ok()) {
    jobs_.Fail(job->job_id(), std::string(s.message())).IgnoreError();
    return s;
  }
  v1::SubmitJobResponse out;
  out.set_job_id(job->job_id());
  return out;
}

absl::StatusOr<v1::Job> Coordinator::GetJob(const v1::GetJobRequest& r) {
  if (absl::Status s = RequireJobId(r.job_id()); !s.ok()) return s;
  return jobs_.Get(r.job_id());
}

absl::StatusOr<v1::ListJobsResponse> Coordinator::ListJobs(
    const v1::ListJobsRequest& r) {
  std::vector<v1::JobState> states;
  for (int s : r.states()) {
    if (!v1::JobState_IsValid(s) || s == v1::JOB_STATE_UNSPECIFIED) {
      return absl::InvalidArgumentError(absl::StrCat("unknown job state ", s));
    }
    states.push_back(static_cast<v1::JobState>(s));
  }
  absl::StatusOr<JobPage> page =
      jobs_.ListPage(states, r.page_size(), r.page_token());
  if (!page.ok()) return page.status();
  v1::ListJobsResponse out;
  for (v1::Job& job : page->jobs) *out.add_jobs() = std::move(job);
  out.set_next_page_token(std::move(page->next_page_token));
  return out;
}

absl::StatusOr<v1::DeleteJobResponse> Coordinator::DeleteJob(
    const v1::DeleteJobRequest& r) {
  if (absl::Status s = RequireJobId(r.job_id()); !s.ok()) return s;
  // A finished job's rendezvous, KV space and barriers went when it
  // finished (OnJobFinished): only its record is left.
  if (absl::Status s = jobs_.Delete(r.job_id()); !s.ok()) return s;
  return v1::DeleteJobResponse();
}

absl::StatusOr<v1::Job> Coordinator::CancelJob(const v1::CancelJobRequest& r) {
  if (absl::Status s = RequireJobId(r.job_id()); !s.ok()) return s;
  return jobs_.Cancel(r.job_id());
}

absl::StatusOr<uint64_t> Coordinator::WatchJob(const std::string& job_id,
                                               JobManager::Watcher watcher) {
  if (absl::Status s = RequireJobId(job_id); !s.ok()) return s;
  return jobs_.Watch(job_id, std::move(watcher));
}

void Coordinator::UnwatchJob(const std::string& job_id, uint64_t token) {
  jobs_.Unwatch(job_id, token);
}

v1::ListWorkersResponse Coordinator::ListWorkers() {
  v1::ListWorkersResponse out;
  for (v1::WorkerInfo& w : workers_.List()) *out.add_workers() = std::move(w);
  return out;
}

}  // namespace ringleader
