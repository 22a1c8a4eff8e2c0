#include "coordinator/worker_registry.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/quote_for_error.h"
#include "common/tls_credentials.h"
#include "coordinator/worker_token.h"

namespace ringleader {
namespace {

std::string RandomInstanceTag() {
  std::random_device rd;
  return absl::StrFormat("%06x", rd() & 0xffffff);
}

absl::Status ValidateRegistration(const v1::RegisterRequest& r) {
  if (r.hostname().empty() || r.hostname().size() > 253) {
    return absl::InvalidArgumentError(
        "register: hostname must be 1..253 bytes");
  }
  if (r.device() != "cpu" &&
      !(r.device().rfind("cuda:", 0) == 0 && r.device().size() > 5 &&
        std::all_of(r.device().begin() + 5, r.device().end(), ::isdigit))) {
    return absl::InvalidArgumentError(
        absl::StrCat("register: device must be 'cpu' or 'cuda:N', got ",
                     QuoteForError(r.device())));
  }
  if (r.pid() <= 0) {
    return absl::InvalidArgumentError("register: pid must be positive");
  }
  if (r.address().size() > 300) {
    return absl::InvalidArgumentError("register: address is too long");
  }
  if (r.resume_job_id().size() > 256) {
    return absl::InvalidArgumentError("register: resume_job_id is too long");
  }
  if (r.process_id().size() > 64) {
    return absl::InvalidArgumentError("register: process_id is too long");
  }
  return absl::OkStatus();
}

// The worker's entry in `workers` (const or not); NOT_FOUND naming it when
// it is not registered.
template <typename Map>
auto FindEntry(Map& workers, const std::string& worker_id)
    -> absl::StatusOr<decltype(&workers.begin()->second)> {
  auto it = workers.find(worker_id);
  if (it == workers.end()) {
    return absl::NotFoundError(absl::StrCat("worker ", QuoteForError(worker_id),
                                            " is not registered"));
  }
  return &it->second;
}

// What a worker the registry does not know (its lease expired, or it never
// registered) is told by its own calls: it registers again.
absl::Status NotRegistered(const std::string& worker_id) {
  return absl::NotFoundError(
      absl::StrCat("worker ", QuoteForError(worker_id),
                   " is not registered (lease expired?)"));
}

}  // namespace

WorkerRegistry::WorkerRegistry(Clock* clock, Options options)
    : clock_(clock), options_(options), instance_(RandomInstanceTag()) {}

absl::StatusOr<WorkerRegistry::Registration> WorkerRegistry::Register(
    const v1::RegisterRequest& request, const std::string& peer_identity,
    const Credential* previous) {
  if (absl::Status s = ValidateRegistration(request); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  Registration out;
  const absl::Time now = clock_->Now();
  const std::string kept =
      VerifiedPreviousLocked(request, peer_identity, previous);
  // The same process registering again (it lost its lease, or the coordinator
  // restarted) replaces its old records: one process is one worker.
  if (auto same = by_process_.find(ProcessKey(request));
      same != by_process_.end()) {
    // A copy: Unindex empties (and erases) the set.
    const absl::flat_hash_set<std::string> ids = same->second;
    for (const std::string& id : ids) {
      if (id == kept) continue;
      auto node = workers_.extract(id);
      if (node.empty()) continue;
      Unindex(node.mapped().info);
      RememberRemovedLocked(node.mapped().info, node.mapped().secret, now);
      out.replaced.push_back(std::move(node.mapped().info));
    }
  }
  out.kept_id = !kept.empty();
  if (auto live = workers_.find(kept); out.kept_id && live != workers_.end()) {
    // Still registered: the same worker, with a new token and lease, in
    // whatever job it was.
    const std::string job = live->second.info.job_id();
    Unindex(live->second.info);
    workers_.erase(live);
    Entry& e = AddLocked(kept, request, peer_identity, now, out);
    e.info.set_job_id(job);
    e.info.set_state(job.empty() ? v1::WORKER_STATE_IDLE
                                 : v1::WORKER_STATE_BUSY);
    return out;
  }
  if (!out.kept_id && workers_.size() >= options_.max_workers) {
    return absl::ResourceExhaustedError(
        absl::StrCat("register: the coordinator already has ", workers_.size(),
                     " workers, its limit"));
  }
  const std::string id = out.kept_id
                             ? kept
                             : absl::StrFormat("w-%s-%05d", instance_,
                                               static_cast<int>(next_seq_++));
  removed_.erase(id);
  AddLocked(id, request, peer_identity, now, out);
  return out;
}

WorkerRegistry::Entry& WorkerRegistry::AddLocked(
    const std::string& id, const v1::RegisterRequest& request,
    const std::string& peer_identity, absl::Time now, Registration& out) {
  Entry& e = workers_[id];
  e.info.set_worker_id(id);
  e.info.set_hostname(request.hostname());
  e.info.set_device(request.device());
  e.info.set_pid(request.pid());
  e.info.set_process_id(request.process_id());
  e.info.set_address(request.address());
  e.info.set_state(v1::WORKER_STATE_IDLE);
  e.info.set_last_heartbeat_ms(absl::ToUnixMillis(now));
  e.info.set_registered_ms(absl::ToUnixMillis(now));
  e.lease_expiry = now + options_.lease;
  const std::string token = NewWorkerToken();
  e.secret.set_token_sha256(WorkerTokenHash(token));
  e.secret.set_peer_identity(peer_identity);
  Index(e.info);
  out.response.set_worker_id(id);
  out.response.set_worker_token(token);
  out.response.set_lease_ms(absl::ToInt64Milliseconds(options_.lease));
  out.response.set_heartbeat_interval_ms(
      absl::ToInt64Milliseconds(options_.heartbeat_interval));
  return e;
}

std::string WorkerRegistry::VerifiedPreviousLocked(
    const v1::RegisterRequest& request, const std::string& peer_identity,
    const Credential* previous) const {
  if (previous == nullptr || previous->first.empty()) return "";
  const auto& [id, token] = *previous;
  const v1::MemberSecret* secret = nullptr;
  std::string key;
  if (auto live = workers_.find(id); live != workers_.end()) {
    secret = &live->second.secret;
    key = ProcessKey(live->second.info);
  } else if (auto gone = removed_.find(id);
             gone != removed_.end() &&
             clock_->Now() - gone->second.at <= options_.keep_removed) {
    secret = &gone->second.secret;
    key = gone->second.process_key;
  } else {
    return "";
  }
  // Another process's credential (or a guessed one) earns nothing: the
  // registration is a new worker.
  if (key != ProcessKey(request) || secret->token_sha256().empty() ||
      !ConstantTimeEquals(WorkerTokenHash(token), secret->token_sha256()) ||
      secret->peer_identity() != peer_identity) {
    return "";
  }
  return id;
}

void WorkerRegistry::RememberRemovedLocked(const v1::WorkerInfo& info,
                                           const v1::MemberSecret& secret,
                                           absl::Time now) {
  removed_[info.worker_id()] = Removed{ProcessKey(info), secret, now};
  removed_order_.emplace_back(now, info.worker_id());
  while (!removed_order_.empty() &&
         (now - removed_order_.front().first > options_.keep_removed ||
          removed_order_.size() > options_.max_workers)) {
    const auto& [at, id] = removed_order_.front();
    auto it = removed_.find(id);
    if (it != removed_.end() && it->second.at == at) removed_.erase(it);
    removed_order_.pop_front();
  }
}

absl::StatusOr<v1::WorkerInfo> WorkerRegistry::Heartbeat(
    const std::string& worker_id) {
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) {
    return NotRegistered(worker_id);
  }
  const absl::Time now = clock_->Now();
  it->second.lease_expiry = now + options_.lease;
  v1::WorkerInfo& info = it->second.info;
  info.set_last_heartbeat_ms(absl::ToUnixMillis(now));
  info.set_state(info.job_id().empty() ? v1::WORKER_STATE_IDLE
                                       : v1::WORKER_STATE_BUSY);
  return info;
}

absl::Status WorkerRegistry::Restore(const v1::WorkerInfo& info,
                                     absl::Duration first_lease,
                                     const v1::MemberSecret& secret) {
  if (info.worker_id().empty()) {
    return absl::InvalidArgumentError("restore: worker_id is empty");
  }
  absl::MutexLock lock(&mu_);
  if (workers_.contains(info.worker_id())) {
    return absl::AlreadyExistsError(absl::StrCat(
        "restore: worker ", QuoteForError(info.worker_id()), " is registered"));
  }
  const absl::Time now = clock_->Now();
  Entry& e = workers_[info.worker_id()];
  e.info = info;
  e.info.set_state(info.job_id().empty() ? v1::WORKER_STATE_IDLE
                                         : v1::WORKER_STATE_BUSY);
  e.info.set_last_heartbeat_ms(absl::ToUnixMillis(now));
  e.lease_expiry = now + first_lease;
  e.secret = secret;
  Index(e.info);
  return absl::OkStatus();
}

absl::Status WorkerRegistry::Authenticate(
    const std::string& worker_id, const std::string& token,
    const std::string& peer_identity) const {
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) {
    return NotRegistered(worker_id);
  }
  const v1::MemberSecret& secret = it->second.secret;
  // A restored worker without a stored hash matches no token: it registers
  // again.
  if (secret.token_sha256().empty() ||
      !ConstantTimeEquals(WorkerTokenHash(token), secret.token_sha256())) {
    return absl::UnauthenticatedError(absl::StrCat(
        "the call's token is not worker ", QuoteForError(worker_id), "'s"));
  }
  if (peer_identity != secret.peer_identity()) {
    return absl::UnauthenticatedError(absl::StrCat(
        "worker ", QuoteForError(worker_id), " registered with certificate ",
        QuoteForError(secret.peer_identity()), ", not ",
        QuoteForError(peer_identity)));
  }
  return absl::OkStatus();
}

absl::Status WorkerRegistry::AuthenticateRecent(
    const std::string& worker_id, const std::string& token,
    const std::string& peer_identity) const {
  absl::Status s = Authenticate(worker_id, token, peer_identity);
  if (!absl::IsNotFound(s)) return s;
  absl::MutexLock lock(&mu_);
  auto gone = removed_.find(worker_id);
  if (gone == removed_.end() ||
      clock_->Now() - gone->second.at > options_.keep_removed) {
    return s;
  }
  const v1::MemberSecret& secret = gone->second.secret;
  if (secret.token_sha256().empty() ||
      !ConstantTimeEquals(WorkerTokenHash(token), secret.token_sha256()) ||
      secret.peer_identity() != peer_identity) {
    return absl::UnauthenticatedError(absl::StrCat(
        "the call's token was not worker ", QuoteForError(worker_id), "'s"));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::MemberSecret> WorkerRegistry::Secret(
    const std::string& worker_id) const {
  absl::MutexLock lock(&mu_);
  auto e = FindEntry(workers_, worker_id);
  if (!e.ok()) return e.status();
  return (*e)->secret;
}

std::vector<v1::WorkerInfo> WorkerRegistry::ExpireLeases(KeepSilent keep) {
  absl::MutexLock lock(&mu_);
  std::vector<v1::WorkerInfo> dead;
  const absl::Time now = clock_->Now();
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (it->second.lease_expiry <= now &&
        keep(it->second.info, ReplacedOnHost(it->second.info, now))) {
      it->second.info.set_state(v1::WORKER_STATE_SILENT);
      ++it;
    } else if (it->second.lease_expiry <= now) {
      Unindex(it->second.info);
      RememberRemovedLocked(it->second.info, it->second.secret, now);
      dead.push_back(it->second.info);
      workers_.erase(it++);
    } else {
      ++it;
    }
  }
  return dead;
}

absl::StatusOr<v1::WorkerInfo> WorkerRegistry::Remove(
    const std::string& worker_id) {
  absl::MutexLock lock(&mu_);
  auto node = workers_.extract(worker_id);
  if (node.empty()) {
    return absl::NotFoundError(absl::StrCat("worker ", QuoteForError(worker_id),
                                            " is not registered"));
  }
  Unindex(node.mapped().info);
  RememberRemovedLocked(node.mapped().info, node.mapped().secret,
                        clock_->Now());
  return node.mapped().info;
}

bool WorkerRegistry::ReplacedOnHost(const v1::WorkerInfo& info,
                                    absl::Time now) const {
  auto same = by_device_.find(DeviceKey(info));
  if (same == by_device_.end()) return false;
  for (const std::string& id : same->second) {
    const Entry& e = workers_.at(id);
    if (id != info.worker_id() && e.lease_expiry > now &&
        e.info.registered_ms() > info.last_heartbeat_ms()) {
      return true;
    }
  }
  return false;
}

std::string WorkerRegistry::DeviceKey(const v1::WorkerInfo& info) {
  return absl::StrCat(info.hostname(), "\n", info.device());
}

// With the process's incarnation: PID 1 of one container is not PID 1 of
// the next on the same host.
std::string WorkerRegistry::ProcessKey(const v1::WorkerInfo& info) {
  return absl::StrCat(info.hostname(), "\n", info.pid(), "\n", info.device(),
                      "\n", info.process_id());
}

std::string WorkerRegistry::ProcessKey(const v1::RegisterRequest& request) {
  return absl::StrCat(request.hostname(), "\n", request.pid(), "\n",
                      request.device(), "\n", request.process_id());
}

void WorkerRegistry::Index(const v1::WorkerInfo& info) {
  by_process_[ProcessKey(info)].insert(info.worker_id());
  by_device_[DeviceKey(info)].insert(info.worker_id());
}

void WorkerRegistry::Unindex(const v1::WorkerInfo& info) {
  for (auto [index, key] : {std::pair{&by_process_, ProcessKey(info)},
                            std::pair{&by_device_, DeviceKey(info)}}) {
    auto it = index->find(key);
    if (it == index->end()) continue;
    it->second.erase(info.worker_id());
    if (it->second.empty()) index->erase(it);
  }
}

absl::StatusOr<v1::WorkerInfo> WorkerRegistry::Get(
    const std::string& worker_id) const {
  absl::MutexLock lock(&mu_);
  auto e = FindEntry(workers_, worker_id);
  if (!e.ok()) return e.status();
  return (*e)->info;
}

absl::Status WorkerRegistry::SetJob(const std::string& worker_id,
                                    const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  auto e = FindEntry(workers_, worker_id);
  if (!e.ok()) return e.status();
  v1::WorkerInfo& info = (*e)->info;
  info.set_job_id(job_id);
  info.set_state(job_id.empty() ? v1::WORKER_STATE_IDLE
                                : v1::WORKER_STATE_BUSY);
  return absl::OkStatus();
}

std::vector<v1::WorkerInfo> WorkerRegistry::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<v1::WorkerInfo> out;
  out.reserve(workers_.size());
  for (const auto& [id, e] : workers_) out.push_back(e.info);
  std::sort(out.begin(), out.end(),
            [](const v1::WorkerInfo& a, const v1::WorkerInfo& b) {
              return a.worker_id() < b.worker_id();
            });
  return out;
}

}  // namespace ringleader
