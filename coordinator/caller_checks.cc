#include "coordinator/caller_checks.h"

#include "absl/strings/str_cat.h"
#include "common/job_over.h"
#include "common/quote_for_error.h"

namespace ringleader {
namespace {

absl::Status NoCredential(absl::string_view what) {
  return absl::UnauthenticatedError(absl::StrCat(
      what,
      " needs the caller's x-ringleader-worker metadata "
      "(\"<worker_id>:<worker_token>\" from Register): register first"));
}

// A registered worker's credential that fails is UNAUTHENTICATED on calls
// that name a generation: NOT_FOUND there would read as "no such job".
absl::Status AsUnauthenticated(absl::Status s) {
  if (absl::IsNotFound(s)) return absl::UnauthenticatedError(s.message());
  return s;
}

}  // namespace

absl::Status CallerChecks::CheckWorker(const Caller& caller,
                                       const std::string& worker_id) const {
  const std::string* token = caller.TokenOf(worker_id);
  if (token == nullptr) {
    return NoCredential(
        absl::StrCat("a call for worker ", QuoteForError(worker_id)));
  }
  // NOT_FOUND stays: it tells a worker whose lease expired to register again.
  return workers_.Authenticate(worker_id, *token, caller.peer_identity);
}

absl::Status CallerChecks::CheckMember(const std::string& job_id,
                                       int64_t generation, int32_t rank) const {
  if (absl::Status s = RequireJobId(job_id); !s.ok()) return s;
  absl::Status s = rendezvous_.CheckMember(job_id, generation, rank);
  if (absl::IsNotFound(s)) {
    absl::StatusOr<v1::Job> job = jobs_.Get(job_id);
    if (!job.ok()) return job.status();
    return JobOverError(QuoteForError(job_id), job->state());
  }
  return s;
}

absl::Status CallerChecks::CheckRank(const Caller& caller,
                                     const std::string& job_id,
                                     int64_t generation, int32_t rank) const {
  if (absl::Status s = CheckMember(job_id, generation, rank); !s.ok()) {
    return s;
  }
  return CheckRankHolder(caller, job_id, generation, rank);
}

absl::Status CallerChecks::CheckGeneration(const Caller& caller,
                                           const std::string& job_id,
                                           int64_t generation) const {
  if (absl::Status s = CheckMember(job_id, generation, 0); !s.ok()) return s;
  return CheckGenerationCaller(caller, job_id, generation);
}

absl::Status CallerChecks::CheckRankHolder(const Caller& caller,
                                           const std::string& job_id,
                                           int64_t generation,
                                           int32_t rank) const {
  if (caller.tokens.empty()) {
    return NoCredential(absl::StrCat("a call for rank ", rank));
  }
  absl::StatusOr<Rendezvous::LiveRank> live =
      rendezvous_.LiveRankOf(job_id, generation, rank);
  if (!live.ok()) return live.status();
  const std::string& holder = live->member.worker_id;
  if (const std::string* token = caller.TokenOf(holder); token != nullptr) {
    return AsUnauthenticated(
        workers_.Authenticate(holder, *token, caller.peer_identity));
  }
  // A lone credential that is no worker's is refused as such; a worker's
  // that is not the holder's, for the rank.
  if (caller.tokens.size() == 1) {
    const auto& [id, token] = *caller.tokens.begin();
    if (absl::Status s = workers_.Authenticate(id, token, caller.peer_identity);
        !s.ok()) {
      return AsUnauthenticated(s);
    }
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "rank ", rank, " of generation ", generation, " of job ",
      QuoteForError(job_id), " is not held by the caller's worker"));
}

absl::Status CallerChecks::CheckGenerationCaller(const Caller& caller,
                                                 const std::string& job_id,
                                                 int64_t generation) const {
  if (caller.tokens.empty()) {
    return NoCredential(absl::StrCat("a call for generation ", generation));
  }
  absl::Status refused;
  for (const auto& [id, token] : caller.tokens) {
    absl::StatusOr<int32_t> rank =
        rendezvous_.LiveRankOfWorker(job_id, generation, id);
    if (absl::IsAborted(rank.status())) return rank.status();
    absl::Status s = workers_.Authenticate(id, token, caller.peer_identity);
    if (!s.ok()) {
      refused = AsUnauthenticated(s);
    } else if (rank.ok()) {
      return absl::OkStatus();
    } else if (refused.ok()) {
      refused = absl::PermissionDeniedError(rank.status().message());
    }
  }
  return refused;
}

}  // namespace ringleader
