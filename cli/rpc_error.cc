#include "cli/rpc_error.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace ringleader::cli {
namespace {

// grpc::StatusCode and absl::StatusCode share their numbering.
absl::StatusCode ToAbslCode(grpc::StatusCode code) {
  return static_cast<absl::StatusCode>(static_cast<int>(code));
}

bool IsApplicationError(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::OUT_OF_RANGE:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string OneLine(absl::string_view text) {
  std::string s =
      absl::StrReplaceAll(text, {{"\r\n", " "}, {"\n", " "}, {"\r", " "}});
  return std::string(absl::StripAsciiWhitespace(s));
}

std::string TidyLines(absl::string_view text) {
  std::vector<absl::string_view> lines;
  for (absl::string_view line :
       absl::StrSplit(text, absl::ByAnyChar("\r\n"), absl::SkipWhitespace())) {
    lines.push_back(absl::StripAsciiWhitespace(line));
  }
  return absl::StrJoin(lines, "\n");
}

absl::Status RpcErrorToStatus(const grpc::Status& status,
                              const RpcCallInfo& call) {
  if (status.ok()) return absl::OkStatus();
  const grpc::StatusCode code = status.error_code();
  const absl::StatusCode absl_code = ToAbslCode(code);
  const bool unreachable =
      code == grpc::StatusCode::UNAVAILABLE ||
      (code == grpc::StatusCode::DEADLINE_EXCEEDED && !call.connected);
  if (unreachable) {
    return absl::Status(
        absl_code, absl::StrCat("cannot reach coordinator at ", call.address,
                                " (is it running?)"));
  }
  if (code == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return absl::Status(
        absl_code,
        absl::StrCat("coordinator at ", call.address, " did not answer within ",
                     absl::FormatDuration(call.timeout)));
  }
  if (IsApplicationError(code)) {
    const std::string lines = TidyLines(status.error_message());
    if (!lines.empty()) return absl::Status(absl_code, lines);
  }
  // Anything else is put into a sentence of ours, which is one line.
  const std::string message = OneLine(status.error_message());
  return absl::Status(
      absl_code, absl::StrCat("coordinator at ", call.address,
                              " failed: ", absl::StatusCodeToString(absl_code),
                              message.empty() ? "" : ": ", message));
}

}  // namespace ringleader::cli
