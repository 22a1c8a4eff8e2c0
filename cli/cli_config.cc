#include "cli/cli_config.h"

#include <cmath>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/tls_credentials.h"

namespace ringleader::cli {

std::string DefaultCoordinator(const char* env_value) {
  if (env_value != nullptr && env_value[0] != '\0') return env_value;
  return kDefaultCoordinator;
}

absl::StatusOr<std::string> ResolveToken(const std::string& token_flag,
                                         const std::string& token_file,
                                         const char* env_value) {
  if (!token_flag.empty() && !token_file.empty()) {
    return absl::InvalidArgumentError("--token and --token_file are exclusive");
  }
  if (!token_flag.empty()) return token_flag;
  if (!token_file.empty()) return ReadTokenFile("--token_file", token_file);
  return env_value != nullptr ? std::string(env_value) : std::string();
}

absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view text) {
  if (text == "text") return OutputFormat::kText;
  if (text == "json") return OutputFormat::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("--output must be text or json (got \"", text, "\")"));
}

absl::StatusOr<absl::Duration> ParseTimeout(absl::string_view text) {
  absl::Duration d;
  double seconds = 0;
  if (absl::SimpleAtod(text, &seconds)) {
    d = std::isfinite(seconds) ? absl::Seconds(seconds) : absl::ZeroDuration();
  } else if (!absl::ParseDuration(text, &d)) {
    d = absl::ZeroDuration();  // Rejected below.
  }
  if (!(d > absl::ZeroDuration()) || d == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--timeout must be a positive duration such as 10s or 500ms (got \"",
        text, "\")"));
  }
  return d;
}

}  // namespace ringleader::cli
