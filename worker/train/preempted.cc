#include "worker/train/preempted.h"

#include "absl/strings/cord.h"

namespace ringleader {
namespace {

constexpr char kPreemptedPayload[] = "ringleader.dev/preempted";

}  // namespace

absl::Status Preempted(const std::string& message) {
  absl::Status out = absl::CancelledError(message);
  out.SetPayload(kPreemptedPayload, absl::Cord("1"));
  return out;
}

bool IsPreempted(const absl::Status& s) {
  return s.GetPayload(kPreemptedPayload).has_value();
}

}  // namespace ringleader
