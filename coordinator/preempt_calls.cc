#include "coordinator/preempt_calls.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader {
namespace {

v1::PreemptResponse ResponseOf(const Preemption::Outcome& o) {
  v1::PreemptResponse out;
  out.set_verdict(o.verdict == Preemption::Verdict::kWhole
                      ? v1::PREEMPT_VERDICT_WHOLE
                      : v1::PREEMPT_VERDICT_PARTIAL);
  out.set_save_checkpoint(o.save_checkpoint);
  out.set_steps_agree(o.steps_agree);
  return out;
}

}  // namespace

Canceller PreemptCalls::Preempt(const Caller& caller,
                                const v1::PreemptRequest& r,
                                Reply<v1::PreemptResponse> done) {
  if (absl::Status s =
          checks_.CheckRank(caller, r.job_id(), r.generation(), r.rank());
      !s.ok()) {
    return Refuse(done, s);
  }
  if (r.step() < -1) {
    return Refuse(done, absl::InvalidArgumentError(absl::StrCat(
                            "step ", r.step(), " is below -1 (no state)")));
  }
  const GenerationKey key{r.job_id(), r.generation()};
  if (r.finished()) {
    absl::Status s = preemption_.Finish(key, r.rank(), r.step() >= 0);
    if (!s.ok()) return Refuse(done, s);
    done(v1::PreemptResponse{});
    return nullptr;
  }
  if (rendezvous_.StageOf(r.job_id()) != Rendezvous::Stage::kTraining) {
    return Refuse(done, absl::FailedPreconditionError(absl::StrCat(
                            "generation ", r.generation(),
                            " trained to its last step: its ranks finish")));
  }
  // The generation can end (and a smaller one form) between the check and
  // the use of its size.
  absl::StatusOr<Rendezvous::LiveRank> live =
      rendezvous_.LiveRankOf(r.job_id(), r.generation(), r.rank());
  if (!live.ok()) return Refuse(done, live.status());
  const uint64_t id = preemption_.Arrive(
      key, live->world_size, r.rank(), live->member.worker_id, r.step(),
      [done = std::move(done)](absl::StatusOr<Preemption::Outcome> o) {
        if (!o.ok()) {
          done(o.status());
          return;
        }
        done(ResponseOf(*o));
      });
  return
      [this, key, rank = r.rank(), id] { preemption_.Withdraw(key, rank, id); };
}

}  // namespace ringleader
