#include "worker/train/job_error.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace ringleader {
namespace {

constexpr char kJobErrorPayload[] = "ringleader.dev/job-error";
constexpr size_t kMaxFatalError = 4096;  // The coordinator's limit.

}  // namespace

absl::Status JobError(const absl::Status& s, const std::string& context) {
  const absl::StatusCode code = s.code() == absl::StatusCode::kAborted
                                    ? absl::StatusCode::kFailedPrecondition
                                    : s.code();
  absl::Status out(code, context.empty()
                             ? std::string(s.message())
                             : absl::StrCat(context, ": ", s.message()));
  out.SetPayload(kJobErrorPayload, absl::Cord("1"));
  return out;
}

bool IsJobError(const absl::Status& s) {
  return s.GetPayload(kJobErrorPayload).has_value();
}

absl::Status CollectiveFailed(const absl::Status& s) {
  return absl::AbortedError(absl::StrCat("collective failed: ", s.message()));
}

void ReportJobError(CoordinatorLink& link, const std::string& job_id,
                    int64_t generation, int32_t rank,
                    const absl::Status& error) {
  v1::ReportProgressRequest r;
  r.set_job_id(job_id);
  r.set_generation(generation);
  r.set_rank(rank);
  std::string message(error.message());
  if (message.empty()) message = error.ToString();
  if (message.size() > kMaxFatalError) {
    // Cut at a UTF-8 character boundary: a proto string must stay valid.
    size_t n = kMaxFatalError;
    while (n > 0 && (static_cast<unsigned char>(message[n]) & 0xC0) == 0x80) {
      --n;
    }
    message.resize(n);
  }
  r.set_fatal_error(message);
  if (absl::Status s = link.ReportProgress(r, /*cancel=*/nullptr); !s.ok()) {
    LOG(WARNING) << "reporting the job error failed: " << s.message();
  }
}

}  // namespace ringleader
