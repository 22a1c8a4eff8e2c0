#include "worker/worker_env.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ringleader {
namespace {

// A set, non-empty value (an empty variable counts as unset, as in torchrun).
std::optional<std::string> NonEmpty(const EnvLookup& env,
                                    const std::string& name) {
  std::optional<std::string> v = env(name);
  if (!v.has_value()) return std::nullopt;
  std::string s(absl::StripAsciiWhitespace(*v));
  if (s.empty()) return std::nullopt;
  return s;
}

absl::StatusOr<int> ParseInt(const std::string& name, const std::string& value,
                             int min, int max) {
  int n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < min || n > max) {
    return absl::InvalidArgumentError(absl::StrCat(
        "$", name, "=", value, " must be an integer in ", min, "..", max));
  }
  return n;
}

}  // namespace

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

absl::StatusOr<WorkerEnv> ResolveWorkerEnv(const std::string& coordinator_flag,
                                           const EnvLookup& env) {
  WorkerEnv out;
  const std::optional<std::string> master_addr = NonEmpty(env, "MASTER_ADDR");
  const std::optional<std::string> master_port = NonEmpty(env, "MASTER_PORT");
  if (!coordinator_flag.empty()) {
    out.coordinator = coordinator_flag;
    out.coordinator_source = "--coordinator";
  } else if (std::optional<std::string> rc =
                 NonEmpty(env, "RINGLEADER_COORDINATOR")) {
    out.coordinator = *rc;
    out.coordinator_source = "RINGLEADER_COORDINATOR";
  } else if (master_addr.has_value() || master_port.has_value()) {
    if (!master_addr.has_value()) {
      return absl::InvalidArgumentError(
          "$MASTER_PORT is set but $MASTER_ADDR is not");
    }
    if (!master_port.has_value()) {
      return absl::InvalidArgumentError(
          "$MASTER_ADDR is set but $MASTER_PORT is not");
    }
    absl::StatusOr<int> port = ParseInt("MASTER_PORT", *master_port, 1, 65535);
    if (!port.ok()) return port.status();
    // An IPv6 literal needs brackets before the port.
    const bool v6 = master_addr->find(':') != std::string::npos &&
                    master_addr->front() != '[';
    out.coordinator = v6 ? absl::StrCat("[", *master_addr, "]:", *port)
                         : absl::StrCat(*master_addr, ":", *port);
    out.coordinator_source = "MASTER_ADDR:MASTER_PORT";
  } else {
    out.coordinator = "127.0.0.1:7070";
    out.coordinator_source = "default";
  }

  const std::optional<std::string> rank = NonEmpty(env, "RANK");
  const std::optional<std::string> world = NonEmpty(env, "WORLD_SIZE");
  if (rank.has_value() != world.has_value()) {
    return absl::InvalidArgumentError(
        rank.has_value() ? "$RANK is set but $WORLD_SIZE is not"
                         : "$WORLD_SIZE is set but $RANK is not");
  }
  if (world.has_value()) {
    absl::StatusOr<int> w = ParseInt("WORLD_SIZE", *world, 1, 1 << 20);
    if (!w.ok()) return w.status();
    absl::StatusOr<int> r = ParseInt("RANK", *rank, 0, *w - 1);
    if (!r.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("$RANK=", *rank, " must be an integer in 0..", *w - 1,
                       " ($WORLD_SIZE=", *w, ")"));
    }
    out.rank = *r;
    out.world_size = *w;
  }
  return out;
}

std::string DescribeWorkerEnv(const WorkerEnv& env) {
  std::string s = absl::StrCat("coordinator ", env.coordinator, " (from ",
                               env.coordinator_source, ")");
  if (env.rank.has_value()) {
    absl::StrAppend(&s, "; PyTorchJob rank ", *env.rank, " of ",
                    *env.world_size,
                    " (a hint: the coordinator assigns ranks)");
  }
  return s;
}

}  // namespace ringleader
