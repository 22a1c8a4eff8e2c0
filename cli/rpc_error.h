#ifndef RINGLEADER_CLI_RPC_ERROR_H_
#define RINGLEADER_CLI_RPC_ERROR_H_

// The one place a failed gRPC call becomes what a ringctl user reads: the
// coordinator's own message for the errors it means (NOT_FOUND, ...), and a
// plain sentence for transport failures. Pure; thread-safe.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/support/status.h"

namespace ringleader::cli {

struct RpcCallInfo {
  absl::string_view address;  // The coordinator, HOST:PORT.
  absl::Duration timeout;     // The call's deadline.
  // Whether the channel was connected when the call failed: a deadline that
  // passes while connecting means the coordinator is not there.
  bool connected = false;
};

// An absl::Status with the gRPC code and a message of one line, except for
// the coordinator's own messages, which keep their lines (TidyLines): a
// refused job spec lists a violation per line.
//   UNAVAILABLE, or DEADLINE_EXCEEDED before connecting:
//     "cannot reach coordinator at HOST:PORT (is it running?)"
//   DEADLINE_EXCEEDED once connected:
//     "coordinator at HOST:PORT did not answer within 10s"
//   codes the coordinator returns on purpose (NOT_FOUND, INVALID_ARGUMENT,
//   FAILED_PRECONDITION, ALREADY_EXISTS, ABORTED, OUT_OF_RANGE): its message
//   others: "coordinator at HOST:PORT failed: <CODE>: <message>"
// OK gives OkStatus().
absl::Status RpcErrorToStatus(const grpc::Status& status,
                              const RpcCallInfo& call);

// `text` on one line: line breaks become spaces, surrounding space trimmed.
std::string OneLine(absl::string_view text);

// `text` as lines joined by "\n": "\r\n" and "\r" break lines too, each line
// is trimmed and empty ones are dropped, so each prints as a line of its own.
std::string TidyLines(absl::string_view text);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_RPC_ERROR_H_
