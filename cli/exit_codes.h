#ifndef RINGLEADER_CLI_EXIT_CODES_H_
#define RINGLEADER_CLI_EXIT_CODES_H_

// ringctl's exit statuses; scripts rely on them, so they never change.

namespace ringleader::cli {

enum ExitCode : int {
  kExitOk = 0,
  // The request was fine but did not work out: coordinator unreachable, an
  // RPC failed, unknown job, the watched job failed or was cancelled.
  kExitOperational = 1,
  // The user asked wrongly: bad flags, invalid job spec, unreadable job file.
  kExitUsage = 2,
};

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_EXIT_CODES_H_
