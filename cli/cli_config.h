#ifndef RINGLEADER_CLI_CLI_CONFIG_H_
#define RINGLEADER_CLI_CLI_CONFIG_H_

// ringctl's global settings, read once in main from flags, the environment
// and the terminal, then handed to every command. Nothing below main reads
// the environment. A value type; thread-compatible.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ringleader::cli {

enum class OutputFormat { kText, kJson };

inline constexpr char kDefaultCoordinator[] = "127.0.0.1:7070";
inline constexpr char kCoordinatorEnvVar[] = "RINGLEADER_COORDINATOR";
inline constexpr char kTokenEnvVar[] = "RINGLEADER_TOKEN";

struct CliConfig {
  std::string coordinator = kDefaultCoordinator;  // HOST:PORT
  OutputFormat output = OutputFormat::kText;
  // Deadline of every unary RPC, and of connecting before a watch.
  absl::Duration timeout = absl::Seconds(10);
  // Whether stdout is a terminal: `watch` then redraws one line.
  bool stdout_is_tty = false;
  // Terminal width in columns when stdout is a terminal (0: unknown).
  int terminal_width = 0;
  // CA of the coordinator's certificate (--tls_ca): TLS when set.
  std::string tls_ca;
  // Bearer token sent with every call (SubmitJob, CancelJob and DeleteJob need
  // it when the coordinator has --auth_token_file); empty: none.
  std::string token;
};

// The --coordinator default: the environment variable's value when it is set
// and not empty, else kDefaultCoordinator. `env_value` may be null.
std::string DefaultCoordinator(const char* env_value);

// The bearer token: --token when given, else the contents of --token_file,
// else the environment variable's value (may be null); "" when none is set.
// Both flags at once is an error.
absl::StatusOr<std::string> ResolveToken(const std::string& token_flag,
                                         const std::string& token_file,
                                         const char* env_value);

// "text" or "json".
absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view text);

// A positive duration: absl syntax ("10s", "500ms", "1m30s") or a plain
// number of seconds ("2.5").
absl::StatusOr<absl::Duration> ParseTimeout(absl::string_view text);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_CLI_CONFIG_H_
