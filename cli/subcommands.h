#ifndef RINGLEADER_CLI_SUBCOMMANDS_H_
#define RINGLEADER_CLI_SUBCOMMANDS_H_

// ringctl's subcommands, one row each: the name, its --help line, the flags
// and arguments it adds to its CLI11 command, and what it runs once the
// command line is read. ringctl_main registers every row and runs the one
// given, so a new subcommand is a row and a handler. Thread-compatible.

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/types/span.h"
#include "cli/cli_config.h"
#include "cli/command_status.h"
#include "cli/coordinator_client.h"
#include "cli/spec_flags.h"

namespace ringleader::cli {

// The subcommands' own flags and arguments, as CLI11 fills them.
struct SubcommandArgs {
  std::string job_id;       // JOB of get, cancel, delete and watch.
  std::string states;       // list --state.
  std::string file;         // submit --file or FILE.
  bool watch = false;       // submit --watch.
  bool history = false;     // get --history.
  SpecOverrides overrides;  // submit's job flags.
  // logs --rank (-1: every rank), --since, --tail, --follow.
  int rank = -1;
  std::string since;
  int tail = 0;
  bool follow = false;
};

// What a subcommand runs with, besides its arguments.
struct SubcommandContext {
  const CliConfig& config;
  CoordinatorClient& client;
  double straggler_factor;  // --straggler_factor, for watch and submit.
  std::ostream& out;
};

struct Subcommand {
  const char* name;
  const char* help;
  // Adds the subcommand's flags and arguments, which fill `*args`.
  void (*add_args)(CLI::App* command, SubcommandArgs* args);
  CommandStatus (*run)(const SubcommandContext& context,
                       const SubcommandArgs& args);
};

// In --help's order.
absl::Span<const Subcommand> Subcommands();

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_SUBCOMMANDS_H_
