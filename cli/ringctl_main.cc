// ringctl: the user's client of the Ringleader coordinator. Wiring only:
// flags and environment into a CliConfig, then the one subcommand given,
// from the table in cli/subcommands.h.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "cli/cli_config.h"
#include "cli/command_status.h"
#include "cli/coordinator_client.h"
#include "cli/exit_codes.h"
#include "cli/rpc_error.h"
#include "cli/straggler.h"
#include "cli/subcommands.h"
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

// The global flags as typed, and the environment; Configure reads them.
struct GlobalFlags {
  std::string output = "text";
  std::string timeout = "10s";
  std::string token;
  std::string token_file;
  const char* token_env = nullptr;
  std::string straggler_factor = "1.5";
};

// The global flags (they may follow the subcommand). --coordinator and
// --tls_ca go straight into `config`.
void AddGlobalFlags(CLI::App* app, CliConfig* config, GlobalFlags* flags) {
  app->add_option("--coordinator", config->coordinator,
                  "Coordinator HOST:PORT (default: $RINGLEADER_COORDINATOR, "
                  "else 127.0.0.1:7070)")
      ->capture_default_str();
  app->add_option("-o,--output", flags->output, "text|json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app->add_option("--timeout", flags->timeout,
                  "Deadline of each call, e.g. 10s, 500ms, 2.5 (seconds); "
                  "a watch stream has none")
      ->capture_default_str();
  app->add_option("--tls_ca", config->tls_ca,
                  "PEM CA of the coordinator's certificate: connect over TLS");
  app->add_option(
      "--token", flags->token,
      "Bearer token for submit, cancel and delete (visible to ps: prefer "
      "--token_file or $RINGLEADER_TOKEN)");
  app->add_option("--token_file", flags->token_file,
                  "File holding the bearer token");
  // Global, so `submit --watch` takes it too.
  app->add_option("--straggler_factor", flags->straggler_factor,
                  "watch: flag a rank whose step time exceeds the median over "
                  "ranks by more than this factor (>= 1)")
      ->capture_default_str();
}

// The config and client the global flags make; the first bad flag, in the
// order they are checked, is a usage error.
absl::StatusOr<std::unique_ptr<CoordinatorClient>> Configure(
    const GlobalFlags& flags, CliConfig* config, double* straggler_factor) {
  absl::StatusOr<OutputFormat> format = ParseOutputFormat(flags.output);
  if (!format.ok()) return format.status();
  config->output = *format;
  absl::StatusOr<absl::Duration> deadline = ParseTimeout(flags.timeout);
  if (!deadline.ok()) return deadline.status();
  config->timeout = *deadline;
  absl::StatusOr<double> factor = ParseStragglerFactor(flags.straggler_factor);
  if (!factor.ok()) return factor.status();
  *straggler_factor = *factor;
  if (config->coordinator.empty()) {
    return absl::InvalidArgumentError("--coordinator must be HOST:PORT");
  }
  absl::StatusOr<std::string> token =
      ResolveToken(flags.token, flags.token_file, flags.token_env);
  if (!token.ok()) return token.status();
  config->token = *std::move(token);
  ClientTlsFiles tls;
  tls.ca = config->tls_ca;
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MakeChannelCredentials(tls);
  if (!credentials.ok()) return credentials.status();
  return std::make_unique<CoordinatorClient>(
      config->coordinator, config->timeout,
      CoordinatorClient::Security{*std::move(credentials), config->token});
}

// What a parse error tells the user.
std::string ParseErrorMessage(const CLI::App& app, const CLI::ParseError& e) {
  // CLI11 reports a misspelt subcommand as a missing one.
  if (app.get_subcommands().empty() && !app.remaining().empty()) {
    return "unknown command \"" + app.remaining().front() +
           "\" (see ringctl --help)";
  }
  return std::string(e.what()) + " (see ringctl --help)";
}

int Main(int argc, char** argv) {
  CliConfig config;
  GlobalFlags flags;
  // The only reads of the environment.
  config.coordinator = DefaultCoordinator(std::getenv(kCoordinatorEnvVar));
  flags.token_env = std::getenv(kTokenEnvVar);
  config.stdout_is_tty = isatty(STDOUT_FILENO) == 1;
  config.terminal_width = config.stdout_is_tty ? TerminalWidth() : 0;

  CLI::App app("ringctl: submit, follow and cancel Ringleader training jobs.",
               "ringctl");
  app.require_subcommand(1, 1);
  app.fallthrough();  // Global flags may follow the subcommand.
  AddGlobalFlags(&app, &config, &flags);
  SubcommandArgs args;
  std::vector<std::pair<const CLI::App*, const Subcommand*>> commands;
  for (const Subcommand& subcommand : Subcommands()) {
    CLI::App* command = app.add_subcommand(subcommand.name, subcommand.help);
    subcommand.add_args(command, &args);
    commands.emplace_back(command, &subcommand);
  }

  double straggler_factor = kDefaultStragglerFactor;
  absl::StatusOr<std::unique_ptr<CoordinatorClient>> client;
  try {
    app.parse(argc, argv);
    client = Configure(flags, &config, &straggler_factor);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    client = absl::InvalidArgumentError(ParseErrorMessage(app, e));
  }
  // The one usage-error exit: the command line or a global flag is wrong.
  if (!client.ok()) {
    return Fail(CommandStatus::Usage(std::string(client.status().message())));
  }

  const SubcommandContext context{config, **client, straggler_factor,
                                  std::cout};
  CommandStatus status = CommandStatus::Ok();
  for (const auto& [command, subcommand] : commands) {
    if (command->parsed()) status = subcommand->run(context, args);
  }
  std::cout.flush();
  return status.ok() ? kExitOk : Fail(status);
}

}  // namespace
}  // namespace ringleader::cli

int main(int argc, char** argv) { return ringleader::cli::Main(argc, argv); }
