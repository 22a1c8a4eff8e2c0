#include "common/job_over.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace ringleader {
namespace {

constexpr absl::string_view kIs = " is ";
constexpr absl::string_view kPrefix = "JOB_STATE_";

}  // namespace

bool IsJobOver(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
         state == v1::JOB_STATE_CANCELLED;
}

absl::Status JobOverError(absl::string_view job_id, v1::JobState state) {
  return absl::FailedPreconditionError(
      absl::StrCat("job ", job_id, " is ", v1::JobState_Name(state)));
}

std::optional<v1::JobState> JobOverState(const absl::Status& status) {
  if (!absl::IsFailedPrecondition(status)) return std::nullopt;
  const absl::string_view message = status.message();
  const size_t at = message.rfind(absl::StrCat(kIs, kPrefix));
  if (at == absl::string_view::npos ||
      message.substr(0, at).find("job ") == absl::string_view::npos) {
    return std::nullopt;
  }
  // The state's name, JOB_STATE_ included, is the rest of the message.
  const std::string name(message.substr(at + kIs.size()));
  v1::JobState state;
  if (!v1::JobState_Parse(name, &state)) return std::nullopt;
  return state;
}

}  // namespace ringleader
