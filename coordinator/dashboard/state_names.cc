#include "coordinator/dashboard/state_names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/enum_names.h"

namespace ringleader::dashboard {

std::string JobStateSpan(v1::JobState state) {
  const std::string lower = EnumValueName(state);
  const std::string upper = absl::AsciiStrToUpper(lower);
  return absl::StrCat("<span class=\"state state-", lower, "\" data-state=\"",
                      upper, "\">", upper, "</span>");
}

std::string WorkerStateText(v1::WorkerState state) {
  return absl::AsciiStrToUpper(EnumValueName(state));
}

}  // namespace ringleader::dashboard
