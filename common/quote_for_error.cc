#include "common/quote_for_error.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace ringleader {

std::string QuoteForError(absl::string_view s) {
  constexpr size_t kMaxBytesShown = 80;
  // Room for the quotes, "..." and " (18446744073709551615 bytes)".
  constexpr size_t kMaxEscaped = kMaxQuotedChars - 2 - 3 - 29;
  size_t n = std::min(s.size(), kMaxBytesShown);
  // The prefix is escaped whole: escaping byte by byte could let a hex
  // escape run into a following hex digit.
  std::string escaped = absl::CHexEscape(s.substr(0, n));
  while (escaped.size() > kMaxEscaped) {
    // A byte escapes to at most 4 characters: drop enough bytes to fit.
    n -= std::max<size_t>(1, (escaped.size() - kMaxEscaped + 3) / 4);
    escaped = absl::CHexEscape(s.substr(0, n));
  }
  if (n == s.size()) return absl::StrCat("\"", escaped, "\"");
  return absl::StrCat("\"", escaped, "...\" (", s.size(), " bytes)");
}

}  // namespace ringleader
