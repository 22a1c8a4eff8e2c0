#include "common/waiting_for_line.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/enum_names.h"

namespace ringleader {
namespace {

std::string Seconds(int64_t ms) {
  return absl::StrFormat("%.1f s", static_cast<double>(ms) / 1000.0);
}

}  // namespace

std::string PhaseWords(v1::WorkerPhase phase) {
  switch (phase) {
    case v1::WORKER_PHASE_UNSPECIFIED:
      return "an unknown phase";
    case v1::WORKER_PHASE_IDLE:
      return "idle";
    case v1::WORKER_PHASE_RENDEZVOUS:
      return "rendezvous";
    case v1::WORKER_PHASE_DATA_LOADING:
      return "data loading";
    case v1::WORKER_PHASE_FORWARD:
      return "forward";
    case v1::WORKER_PHASE_BACKWARD:
      return "backward";
    case v1::WORKER_PHASE_ALLREDUCE_WAIT:
      return "all-reduce wait";
    case v1::WORKER_PHASE_BUFFER_SYNC:
      return "buffer sync";
    case v1::WORKER_PHASE_OPTIMIZER:
      return "optimizer";
    case v1::WORKER_PHASE_CHECKPOINT:
      return "checkpoint";
    case v1::WORKER_PHASE_RECOVERY:
      return "recovery";
    case v1::WORKER_PHASE_EVALUATION:
      return "evaluation";
    default:
      return EnumValueName(phase);
  }
}

std::string CollectiveWords(v1::WorkerPhase phase) {
  // The waiters' own phase says which collective blocks them; outside a
  // step's all-reduce it is the collective of that phase (a recovery's
  // broadcast, an evaluation's sums).
  if (phase == v1::WORKER_PHASE_ALLREDUCE_WAIT) return "all-reduce";
  if (phase == v1::WORKER_PHASE_UNSPECIFIED) return "a collective";
  return PhaseWords(phase);
}

std::string WaitingForLine(const v1::Job& job) {
  if (!job.has_waiting_for()) return "";
  const v1::WaitingFor& w = job.waiting_for();
  std::string line = absl::StrCat("waiting ", Seconds(w.waited_ms()), " in ",
                                  CollectiveWords(w.wait_phase()));
  if (w.step() > 0) absl::StrAppend(&line, " of step ", w.step());
  absl::StrAppend(&line, " for rank ", w.rank());
  if (!w.host().empty()) absl::StrAppend(&line, " (host ", w.host(), ")");
  if (w.silent_ms() > 0) {
    absl::StrAppend(&line, ": no heartbeat for ", Seconds(w.silent_ms()),
                    ", last seen in ", PhaseWords(w.phase()));
  } else {
    absl::StrAppend(&line, ": ", PhaseWords(w.phase()), " for ",
                    Seconds(w.phase_ms()));
  }
  return line;
}

}  // namespace ringleader
