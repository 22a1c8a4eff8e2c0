#ifndef RINGLEADER_CLI_COMMANDS_H_
#define RINGLEADER_CLI_COMMANDS_H_

// The one-shot subcommands: one RPC each, then text or JSON on `out`.
// Errors come back as a CommandStatus for main to print; nothing here writes
// to stderr. `watch` is in cli/watch_command.h. Thread-compatible.

#include <ostream>
#include <string>

#include "cli/cli_config.h"
#include "cli/command_status.h"
#include "cli/coordinator_client.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader::cli {

// Sends `spec` (already built and validated) and prints the job id: the bare
// id as text, {"job_id": ...} as JSON (on one line when `one_line_json`, so
// a following watch stays NDJSON). Sets `*job_id` on success.
CommandStatus RunSubmit(const CliConfig& config, CoordinatorClient& client,
                        const v1::JobSpec& spec, bool one_line_json,
                        std::ostream& out, std::string* job_id);

CommandStatus RunGet(const CliConfig& config, CoordinatorClient& client,
                     const std::string& job_id, std::ostream& out);

// `get --history`: the job's training curves (cli/history_format.h).
CommandStatus RunGetHistory(const CliConfig& config, CoordinatorClient& client,
                            const std::string& job_id, std::ostream& out);

// The most pages `list` follows: 10,000 of the coordinator's default 50
// jobs. A coordinator that keeps handing out tokens beyond it is broken.
inline constexpr int kMaxListPages = 10000;

// `states`: ParseJobStates syntax, empty for all jobs. Follows the pages to
// the end (at most kMaxListPages) and prints them as one table or array.
CommandStatus RunList(const CliConfig& config, CoordinatorClient& client,
                      const std::string& states, std::ostream& out);

CommandStatus RunCancel(const CliConfig& config, CoordinatorClient& client,
                        const std::string& job_id, std::ostream& out);

// Deletes a finished job; prints "job <id> deleted" ({"job_id": ...} as
// JSON).
CommandStatus RunDelete(const CliConfig& config, CoordinatorClient& client,
                        const std::string& job_id, std::ostream& out);

CommandStatus RunWorkers(const CliConfig& config, CoordinatorClient& client,
                         std::ostream& out);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_COMMANDS_H_
