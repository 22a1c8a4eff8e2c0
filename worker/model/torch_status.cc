#include "worker/model/torch_status.h"

#include <c10/util/Exception.h>

#include <exception>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace ringleader {
namespace {

// Longer messages are cut: a status line is not a log.
constexpr size_t kMaxMessage = 2000;

}  // namespace

absl::Status TorchErrorToStatus(absl::StatusCode code,
                                absl::string_view context,
                                const std::exception& e) {
  const auto* torch_error = dynamic_cast<const c10::Error*>(&e);
  const absl::string_view raw =
      torch_error != nullptr ? torch_error->what_without_backtrace() : e.what();
  std::vector<absl::string_view> lines;
  for (absl::string_view line : absl::StrSplit(raw, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) lines.push_back(line);
  }
  std::string message = absl::StrJoin(lines, " | ");
  if (message.size() > kMaxMessage) {
    message.resize(kMaxMessage);
    message += "...";
  }
  return absl::Status(code, absl::StrCat(context, ": ", message));
}

}  // namespace ringleader
