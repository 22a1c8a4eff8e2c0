#ifndef RINGLEADER_COMMON_QUOTE_FOR_ERROR_H_
#define RINGLEADER_COMMON_QUOTE_FOR_ERROR_H_

// The one way an error message shows a value a client sent (a job or worker
// id, a kv key, a barrier name, a path, a spec field): a status travels in a
// gRPC trailer, and a client with default limits (ringctl's too) drops a
// trailer of some kilobytes, so it would see "metadata size exceeds limit"
// instead of the real code. Echoing input whole also lets a client make the
// server build megabyte strings.
//
// Pure function; thread-safe.

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace ringleader {

// The longest QuoteForError result, quotes, "..." and the byte count included.
inline constexpr size_t kMaxQuotedChars = 200;

// `s` C-escaped (control and non-ASCII bytes as \xNN, so it stays on one
// line and cannot forge another) in double quotes. A value longer than 80
// bytes, or whose escaping would pass the limit, is cut at a whole escape
// and ends in `..." (N bytes)`, N being its full size.
std::string QuoteForError(absl::string_view s);

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_QUOTE_FOR_ERROR_H_
