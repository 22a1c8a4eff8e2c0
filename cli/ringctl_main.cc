// ringctl: the user's client of the Ringleader coordinator. Wiring only:
// flags and environment into a CliConfig, then one subcommand.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "cli/cli_config.h"
#include "cli/command_status.h"
#include "cli/commands.h"
#include "cli/coordinator_client.h"
#include "cli/exit_codes.h"
#include "cli/rpc_error.h"
#include "cli/spec_flags.h"
#include "cli/straggler.h"
#include "cli/submit_spec.h"
#include "cli/watch_command.h"
#include "common/tls_credentials.h"

namespace ringleader::cli {
namespace {

int TerminalWidth() {
  struct winsize ws {};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0) return 0;
  return ws.ws_col;
}

// Each line of the message as a "ringctl: " line of its own, as a compiler
// lists its errors (a refused job spec has one per invalid field).
int Fail(const CommandStatus& status) {
  for (absl::string_view line :
       absl::StrSplit(TidyLines(status.message()), '\n')) {
    std::cerr << "ringctl: " << line << "\n";
  }
  return status.code();
}

int Main(int argc, char** argv) {
  CliConfig config;
  // The only read of the environment.
  config.coordinator = DefaultCoordinator(std::getenv(kCoordinatorEnvVar));
  config.stdout_is_tty = isatty(STDOUT_FILENO) == 1;
  config.terminal_width = config.stdout_is_tty ? TerminalWidth() : 0;

  CLI::App app("ringctl: submit, follow and cancel Ringleader training jobs.",
               "ringctl");
  app.require_subcommand(1, 1);
  app.fallthrough();  // Global flags may follow the subcommand.
  std::string output = "text";
  std::string timeout = "10s";
  app.add_option("--coordinator", config.coordinator,
                 "Coordinator HOST:PORT (default: $RINGLEADER_COORDINATOR, "
                 "else 127.0.0.1:7070)")
      ->capture_default_str();
  app.add_option("-o,--output", output, "text|json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("--timeout", timeout,
                 "Deadline of each call, e.g. 10s, 500ms, 2.5 (seconds); "
                 "a watch stream has none")
      ->capture_default_str();
  app.add_option("--tls_ca", config.tls_ca,
                 "PEM CA of the coordinator's certificate: connect over TLS");
  std::string token_flag;
  std::string token_file;
  app.add_option(
      "--token", token_flag,
      "Bearer token for submit, cancel and delete (visible to ps: prefer "
      "--token_file or $RINGLEADER_TOKEN)");
  app.add_option("--token_file", token_file, "File holding the bearer token");

  std::string job_id;
  CLI::App* submit = app.add_subcommand(
      "submit",
      "Submit a job from a spec file and/or flags; prints its id. The spec is "
      "validated here before it is sent.");
  std::string file;
  bool watch_after = false;
  SpecOverrides overrides;
  CLI::Option* file_flag = submit->add_option(
      "-f,--file", file,
      "Job spec: .textproto/.txtpb/.pbtxt/.txt (text format) or .json; job "
      "flags given too override its fields");
  submit->add_option("FILE", file, "Same as --file")->excludes(file_flag);
  submit->add_flag("--watch", watch_after,
                   "Follow the job after submitting, as `ringctl watch`");
  AddSpecFlags(submit, &overrides);

  CLI::App* get = app.add_subcommand("get", "Show one job");
  get->add_option("JOB", job_id, "Job id")->required();

  CLI::App* list = app.add_subcommand("list", "List jobs");
  std::string states;
  list->add_option("--state", states,
                   "Only jobs in these states, comma separated: "
                   "pending,rendezvous,running,restarting,succeeded,failed,"
                   "cancelled");

  CLI::App* cancel = app.add_subcommand("cancel", "Cancel a job");
  cancel->add_option("JOB", job_id, "Job id")->required();

  CLI::App* del = app.add_subcommand(
      "delete",
      "Delete a finished (succeeded, failed or cancelled) job from the "
      "coordinator; its checkpoints stay on disk");
  del->add_option("JOB", job_id, "Job id")->required();

  CLI::App* watch = app.add_subcommand(
      "watch",
      "Follow a job until it ends; exit 0 if it succeeded, 1 if it failed or "
      "was cancelled");
  watch->add_option("JOB", job_id, "Job id")->required();
  // Global, so `submit --watch` takes it too.
  std::string straggler_factor = "1.5";
  app.add_option("--straggler_factor", straggler_factor,
                 "watch: flag a rank whose step time exceeds the median over "
                 "ranks by more than this factor (>= 1)")
      ->capture_default_str();

  CLI::App* workers =
      app.add_subcommand("workers", "List the registered worker daemons");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // CLI11 reports a misspelt subcommand as a missing one.
    if (app.get_subcommands().empty() && !app.remaining().empty()) {
      return Fail(CommandStatus::Usage("unknown command \"" +
                                       app.remaining().front() +
                                       "\" (see ringctl --help)"));
    }
    return Fail(
        CommandStatus::Usage(std::string(e.what()) + " (see ringctl --help)"));
  }

  absl::StatusOr<OutputFormat> format = ParseOutputFormat(output);
  if (!format.ok()) {
    return Fail(CommandStatus::Usage(std::string(format.status().message())));
  }
  config.output = *format;
  absl::StatusOr<absl::Duration> deadline = ParseTimeout(timeout);
  if (!deadline.ok()) {
    return Fail(CommandStatus::Usage(std::string(deadline.status().message())));
  }
  config.timeout = *deadline;
  absl::StatusOr<double> factor = ParseStragglerFactor(straggler_factor);
  if (!factor.ok()) {
    return Fail(CommandStatus::Usage(std::string(factor.status().message())));
  }
  if (config.coordinator.empty()) {
    return Fail(CommandStatus::Usage("--coordinator must be HOST:PORT"));
  }

  absl::StatusOr<std::string> token =
      ResolveToken(token_flag, token_file, std::getenv(kTokenEnvVar));
  if (!token.ok()) {
    return Fail(CommandStatus::Usage(std::string(token.status().message())));
  }
  config.token = *std::move(token);
  ClientTlsFiles tls;
  tls.ca = config.tls_ca;
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MakeChannelCredentials(tls);
  if (!credentials.ok()) {
    return Fail(
        CommandStatus::Usage(std::string(credentials.status().message())));
  }
  CoordinatorClient client(config.coordinator, config.timeout,
                           {*std::move(credentials), config.token});
  CommandStatus status = CommandStatus::Ok();
  if (*submit) {
    absl::StatusOr<v1::JobSpec> spec = BuildSubmitSpec(file, overrides);
    if (!spec.ok()) {
      return Fail(CommandStatus::Usage(std::string(spec.status().message())));
    }
    std::string id;
    status = RunSubmit(config, client, *spec, /*one_line_json=*/watch_after,
                       std::cout, &id);
    if (status.ok() && watch_after) {
      status = RunWatch(config, client, id, std::cout, *factor);
    }
  } else if (*get) {
    status = RunGet(config, client, job_id, std::cout);
  } else if (*list) {
    status = RunList(config, client, states, std::cout);
  } else if (*cancel) {
    status = RunCancel(config, client, job_id, std::cout);
  } else if (*del) {
    status = RunDelete(config, client, job_id, std::cout);
  } else if (*watch) {
    status = RunWatch(config, client, job_id, std::cout, *factor);
  } else if (*workers) {
    status = RunWorkers(config, client, std::cout);
  }
  std::cout.flush();
  return status.ok() ? kExitOk : Fail(status);
}

}  // namespace
}  // namespace ringleader::cli

int main(int argc, char** argv) { return ringleader::cli::Main(argc, argv); }
