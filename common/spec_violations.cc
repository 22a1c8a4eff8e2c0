#include "common/spec_violations.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace ringleader {

std::string Quoted(absl::string_view s) {
  constexpr size_t kMaxBytesShown = 80;
  // Room for the quotes and the "...".
  constexpr size_t kMaxEscaped = kMaxQuotedChars - 5;
  size_t n = std::min(s.size(), kMaxBytesShown);
  // The prefix is escaped whole: escaping byte by byte could let a hex
  // escape run into a following hex digit.
  std::string escaped = absl::CHexEscape(s.substr(0, n));
  while (escaped.size() > kMaxEscaped) {
    // A byte escapes to at most 4 characters: drop enough bytes to fit.
    n -= std::max<size_t>(1, (escaped.size() - kMaxEscaped + 3) / 4);
    escaped = absl::CHexEscape(s.substr(0, n));
  }
  return absl::StrCat("\"", escaped, n < s.size() ? "...\"" : "\"");
}

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
