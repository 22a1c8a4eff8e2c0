#include "common/spec_violations.h"

#include "absl/strings/str_cat.h"

namespace ringleader {

absl::Status Invalid(absl::string_view field, absl::string_view rule,
                     absl::string_view got) {
  return absl::InvalidArgumentError(
      absl::StrCat(kInvalidSpecPrefix, field, " ", rule, " (got ", got, ")"));
}

bool SpecViolations::Check(const absl::Status& s) {
  if (s.ok()) return true;
  lines_.emplace_back(s.message());
  return false;
}

absl::Status SpecViolations::ToStatus() const {
  if (lines_.empty()) return absl::OkStatus();
  std::string message;
  size_t listed = 0;
  // The first line always fits: every rule's line is short.
  for (const std::string& line : lines_) {
    const bool fits =
        listed < kMaxLines && message.size() + 1 + line.size() <= kMaxBytes;
    if (listed > 0 && !fits) break;
    absl::StrAppend(&message, listed > 0 ? "\n" : "", line);
    ++listed;
  }
  if (listed < lines_.size()) {
    // May pass kMaxBytes by this one short line: the budget has headroom.
    absl::StrAppend(&message, "\n", kInvalidSpecPrefix, "... and ",
                    lines_.size() - listed, " more");
  }
  return absl::InvalidArgumentError(message);
}

}  // namespace ringleader
