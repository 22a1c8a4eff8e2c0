#include "common/http/request_head.h"

#include <cstdint>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace ringleader::http {
namespace {

using Kind = RequestProgress::Kind;

RequestProgress Refuse(Kind kind, int status) {
  RequestProgress p;
  p.kind = kind;
  p.status = status;
  return p;
}

// The body's length the head announces: 0 without Content-Length; nullopt
// for one that is no number, two that disagree, or Transfer-Encoding
// (chunked bodies are not taken: no route here reads a body).
std::optional<uint64_t> BodyLength(absl::string_view head) {
  std::optional<uint64_t> length;
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view name = line.substr(0, colon);
    const absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (absl::EqualsIgnoreCase(name, "Transfer-Encoding")) return std::nullopt;
    if (!absl::EqualsIgnoreCase(name, "Content-Length")) continue;
    uint64_t n = 0;
    if (!absl::SimpleAtoi(value, &n) || (length.has_value() && *length != n)) {
      return std::nullopt;
    }
    length = n;
  }
  return length.value_or(0);
}

}  // namespace

RequestProgress CheckRequest(absl::string_view received,
                             const RequestLimits& limits) {
  const size_t end = received.find("\r\n\r\n");
  if (end == absl::string_view::npos) {
    if (received.size() > limits.max_head_bytes) {
      return Refuse(Kind::kTooLarge, 431);
    }
    return RequestProgress();
  }
  const size_t head_bytes = end + 4;
  if (head_bytes > limits.max_head_bytes) return Refuse(Kind::kTooLarge, 431);
  const std::optional<uint64_t> body =
      BodyLength(received.substr(0, head_bytes));
  if (!body.has_value()) return Refuse(Kind::kBad, 400);
  if (*body > limits.max_body_bytes) return Refuse(Kind::kTooLarge, 413);
  if (received.size() < head_bytes + *body) return RequestProgress();
  RequestProgress p;
  p.kind = Kind::kComplete;
  p.bytes = head_bytes + static_cast<size_t>(*body);
  return p;
}

}  // namespace ringleader::http
