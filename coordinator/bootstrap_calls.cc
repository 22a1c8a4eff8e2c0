#include "coordinator/bootstrap_calls.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ringleader {
namespace {

constexpr size_t kNcclUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES.
constexpr int kMaxKvWaitKeys = 4096;
constexpr char kNcclKeyPrefix[] = "__ringleader/nccl_id/";

// Keys under kReservedKeyPrefix are the coordinator's (the NCCL id).
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

// At the field's wire width (int64): a narrower type read INT64_MAX as -1
// and 2^32 + 5 as communicator 5's key (issue 49).
std::string NcclKey(int64_t comm_index) {
  return absl::StrCat(kNcclKeyPrefix, comm_index);
}

absl::Status CheckCommIndex(int64_t comm_index) {
  if (comm_index < 0) {
    return absl::InvalidArgumentError("comm_index must be >= 0");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status BootstrapCalls::KvSet(const Caller& caller,
                                   const v1::KvSetRequest& r) {
  if (absl::Status s =
          checks_.CheckGeneration(caller, r.job_id(), r.generation());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckClientKey(r.key()); !s.ok()) return s;
  return kv_.Set({r.job_id(), r.generation()}, r.key(), r.value());
}

absl::StatusOr<v1::KvGetResponse> BootstrapCalls::KvGet(
    const Caller& caller, const v1::KvGetRequest& r) {
  if (absl::Status s =
          checks_.CheckGeneration(caller, r.job_id(), r.generation());
      !s.ok()) {
    return s;
  }
  v1::KvGetResponse out;
  absl::StatusOr<std::string> v =
      kv_.Get({r.job_id(), r.generation()}, r.key());
  if (v.ok()) {
    out.set_found(true);
    out.set_value(*std::move(v));
  } else if (!absl::IsNotFound(v.status())) {
    return v.status();
  }
  return out;
}

Canceller BootstrapCalls::KvWait(const Caller& caller,
                                 const v1::KvWaitRequest& r,
                                 Reply<v1::KvWaitResponse> done) {
  if (absl::Status s =
          checks_.CheckGeneration(caller, r.job_id(), r.generation());
      !s.ok()) {
    return Refuse(done, s);
  }
  if (r.keys_size() > kMaxKvWaitKeys) {
    return Refuse(done, absl::InvalidArgumentError(absl::StrCat(
                            "kv wait names over ", kMaxKvWaitKeys, " keys")));
  }
  const GenerationKey gen{r.job_id(), r.generation()};
  const KvStore::WaitId id =
      kv_.Wait(gen, std::vector<std::string>(r.keys().begin(), r.keys().end()),
               limits_.Deadline(clock_->Now(), r.timeout_ms()),
               [done = std::move(done)](
                   absl::StatusOr<std::vector<std::string>> values) {
                 if (!values.ok()) return done(values.status());
                 v1::KvWaitResponse out;
                 for (std::string& v : *values) out.add_values(std::move(v));
                 done(std::move(out));
               });
  return CancelKvWait(gen, id);
}

absl::StatusOr<v1::KvAddResponse> BootstrapCalls::KvAdd(
    const Caller& caller, const v1::KvAddRequest& r) {
  if (absl::Status s =
          checks_.CheckGeneration(caller, r.job_id(), r.generation());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckClientKey(r.key()); !s.ok()) return s;
  absl::StatusOr<int64_t> v =
      kv_.Add({r.job_id(), r.generation()}, r.key(), r.delta());
  if (!v.ok()) return v.status();
  v1::KvAddResponse out;
  out.set_value(*v);
  return out;
}

absl::Status BootstrapCalls::PublishNcclId(const Caller& caller,
                                           const v1::PublishNcclIdRequest& r) {
  if (absl::Status s =
          checks_.CheckRank(caller, r.job_id(), r.generation(), r.rank());
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
  if (absl::Status s = CheckCommIndex(r.comm_index()); !s.ok()) return s;
  // Create: atomic (two publishers cannot both succeed) and outside the
  // job's key quota (a space full of its own keys cannot stop NCCL).
  absl::Status s = kv_.Create({r.job_id(), r.generation()},
                              NcclKey(r.comm_index()), r.unique_id());
  if (absl::IsAlreadyExists(s)) {
    return absl::AlreadyExistsError(absl::StrCat("the NCCL id of communicator ",
                                                 r.comm_index(),
                                                 " is already published"));
  }
  return s;
}

Canceller BootstrapCalls::FetchNcclId(const Caller& caller,
                                      const v1::FetchNcclIdRequest& r,
                                      Reply<v1::FetchNcclIdResponse> done) {
  if (absl::Status s =
          checks_.CheckRank(caller, r.job_id(), r.generation(), r.rank());
      !s.ok()) {
    return Refuse(done, s);
  }
  if (absl::Status s = CheckCommIndex(r.comm_index()); !s.ok()) {
    return Refuse(done, s);
  }
  const GenerationKey gen{r.job_id(), r.generation()};
  const KvStore::WaitId id =
      kv_.Wait(gen, {NcclKey(r.comm_index())},
               limits_.Deadline(clock_->Now(), r.timeout_ms()),
               [done = std::move(done)](
                   absl::StatusOr<std::vector<std::string>> values) {
                 if (!values.ok()) return done(values.status());
                 v1::FetchNcclIdResponse out;
                 out.set_unique_id(std::move((*values)[0]));
                 done(std::move(out));
               });
  return CancelKvWait(gen, id);
}

Canceller BootstrapCalls::CancelKvWait(const GenerationKey& gen,
                                       KvStore::WaitId id) {
  if (id == KvStore::kNoWait) return nullptr;
  return [this, gen, id] { kv_.CancelWait(gen, id); };
}

Canceller BootstrapCalls::Barrier(const Caller& caller,
                                  const v1::BarrierRequest& r,
                                  std::function<void(absl::Status)> done) {
  if (absl::Status s =
          checks_.CheckRank(caller, r.job_id(), r.generation(), r.rank());
      !s.ok()) {
    return Refuse(done, s);
  }
  // The generation can end (and a smaller one form) between the check and
  // the use of its size.
  absl::StatusOr<Rendezvous::LiveRank> live =
      rendezvous_.LiveRankOf(r.job_id(), r.generation(), r.rank());
  if (!live.ok()) return Refuse(done, live.status());
  const GenerationKey gen{r.job_id(), r.generation()};
  const uint64_t round = barriers_.Arrive(
      gen, r.name(), r.rank(), live->world_size,
      limits_.Deadline(clock_->Now(), r.timeout_ms()), std::move(done));
  if (round == 0) return nullptr;
  return [this, gen, name = r.name(), round, rank = r.rank()] {
    barriers_.Cancel(gen, name, round, rank);
  };
}

}  // namespace ringleader
