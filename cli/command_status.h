#ifndef RINGLEADER_CLI_COMMAND_STATUS_H_
#define RINGLEADER_CLI_COMMAND_STATUS_H_

// What a subcommand returns: an exit code and, unless it succeeded, the
// message main prints to stderr, each of its lines as "ringctl: <line>"
// (mostly one; a refused job spec has one per invalid field). The exit code
// is chosen where the failure is understood (a NotFound from a job file is a
// usage error, from GetJob an operational one), so it is carried, not
// derived from a status code. A value type; thread-compatible.

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "cli/exit_codes.h"

namespace ringleader::cli {

class CommandStatus {
 public:
  static CommandStatus Ok() { return CommandStatus(kExitOk, ""); }
  static CommandStatus Usage(std::string message) {
    return CommandStatus(kExitUsage, std::move(message));
  }
  static CommandStatus Operational(std::string message) {
    return CommandStatus(kExitOperational, std::move(message));
  }

  bool ok() const { return code_ == kExitOk; }
  ExitCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  CommandStatus(ExitCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  ExitCode code_;
  std::string message_;
};

// How a failed RPC (already in words, see cli/rpc_error.h) ends a command:
// the coordinator refusing the request as invalid is a usage error, anything
// else an operational one.
inline CommandStatus FromRpcStatus(const absl::Status& status) {
  if (status.ok()) return CommandStatus::Ok();
  if (absl::IsInvalidArgument(status)) {
    return CommandStatus::Usage(std::string(status.message()));
  }
  return CommandStatus::Operational(std::string(status.message()));
}

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_COMMAND_STATUS_H_
