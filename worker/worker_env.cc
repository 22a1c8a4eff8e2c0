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

// Slurm's task variables (srun sets them for every task), checked.
absl::Status ReadSlurm(const EnvLookup& env, WorkerEnv& out) {
  out.slurm_job_id = NonEmpty(env, "SLURM_JOB_ID");
  if (!out.slurm_job_id.has_value()) return absl::OkStatus();
  if (std::optional<std::string> step = NonEmpty(env, "SLURM_STEP_ID")) {
    // Not a number for the batch script itself ("batch"): no step then.
    int id = 0;
    if (absl::SimpleAtoi(*step, &id) && id >= 0) out.slurm_step_id = id;
  }
  if (std::optional<std::string> n = NonEmpty(env, "SLURM_NTASKS")) {
    absl::StatusOr<int> ntasks = ParseInt("SLURM_NTASKS", *n, 1, 1 << 20);
    if (!ntasks.ok()) return ntasks.status();
    out.slurm_ntasks = *ntasks;
  }
  if (std::optional<std::string> p = NonEmpty(env, "SLURM_PROCID")) {
    absl::StatusOr<int> procid =
        ParseInt("SLURM_PROCID", *p, 0, out.slurm_ntasks.value_or(1 << 20) - 1);
    if (!procid.ok()) return procid.status();
    out.slurm_procid = *procid;
  }
  return absl::OkStatus();
}

// $LOCAL_RANK, else $SLURM_LOCALID.
absl::Status ReadLocalRank(const EnvLookup& env, WorkerEnv& out) {
  for (const char* name : {"LOCAL_RANK", "SLURM_LOCALID"}) {
    std::optional<std::string> v = NonEmpty(env, name);
    if (!v.has_value()) continue;
    absl::StatusOr<int> local = ParseInt(name, *v, 0, 1 << 16);
    if (!local.ok()) return local.status();
    out.local_rank = *local;
    return absl::OkStatus();
  }
  return absl::OkStatus();
}

// Under Slurm without a coordinator named: the allocation's first node,
// where deploy/slurm's batch script starts it.
absl::StatusOr<std::string> SlurmCoordinator(const EnvLookup& env) {
  std::optional<std::string> nodes = NonEmpty(env, "SLURM_JOB_NODELIST");
  if (!nodes.has_value()) nodes = NonEmpty(env, "SLURM_NODELIST");
  if (!nodes.has_value()) return std::string();
  absl::StatusOr<std::string> host = FirstSlurmHost(*nodes);
  if (!host.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("$SLURM_JOB_NODELIST: ", host.status().message()));
  }
  int port = 7070;
  if (std::optional<std::string> p =
          NonEmpty(env, "RINGLEADER_COORDINATOR_PORT")) {
    absl::StatusOr<int> parsed =
        ParseInt("RINGLEADER_COORDINATOR_PORT", *p, 1, 65535);
    if (!parsed.ok()) return parsed.status();
    port = *parsed;
  }
  return absl::StrCat(*host, ":", port);
}

}  // namespace

absl::StatusOr<std::string> FirstSlurmHost(const std::string& nodelist) {
  // A host list is comma-separated entries, each a name with at most one
  // bracketed set of numbers or ranges: "gpu[01-04,07]", "cpu3".
  const std::string list(absl::StripAsciiWhitespace(nodelist));
  const size_t open = list.find('[');
  const size_t comma = list.find(',');
  if (list.empty() || list.front() == '[' || list.front() == ',') {
    return absl::InvalidArgumentError(
        absl::StrCat("no host in \"", list, "\""));
  }
  if (open == std::string::npos ||
      (comma != std::string::npos && comma < open)) {
    return list.substr(0, comma);
  }
  const size_t close = list.find(']', open);
  if (close == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("unclosed '[' in \"", list, "\""));
  }
  const std::string set = list.substr(open + 1, close - open - 1);
  const std::string first = set.substr(0, set.find_first_of(",-"));
  if (first.empty() ||
      first.find_first_not_of("0123456789") != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad range \"[", set, "]\" in \"", list, "\""));
  }
  // A suffix after the brackets ends at the entry's comma.
  const size_t end = list.find(',', close);
  return absl::StrCat(
      list.substr(0, open), first,
      list.substr(close + 1, end == std::string::npos ? std::string::npos
                                                      : end - close - 1));
}

absl::StatusOr<std::string> ResolveDevice(const std::string& device_flag,
                                          const WorkerEnv& env) {
  if (device_flag != "cuda") return device_flag;
  if (!env.local_rank.has_value()) {
    return absl::InvalidArgumentError(
        "--device=cuda names the launcher's local rank, but neither "
        "$LOCAL_RANK nor $SLURM_LOCALID is set: give cuda:N");
  }
  return absl::StrCat("cuda:", *env.local_rank);
}

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
    absl::StatusOr<std::string> slurm = SlurmCoordinator(env);
    if (!slurm.ok()) return slurm.status();
    out.coordinator = slurm->empty() ? "127.0.0.1:7070" : *slurm;
    out.coordinator_source =
        slurm->empty() ? "default" : "SLURM_JOB_NODELIST's first node";
  }
  if (absl::Status s = ReadSlurm(env, out); !s.ok()) return s;
  if (absl::Status s = ReadLocalRank(env, out); !s.ok()) return s;

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
  if (env.slurm_job_id.has_value()) {
    absl::StrAppend(&s, "; Slurm job ", *env.slurm_job_id);
    if (env.slurm_step_id.has_value()) {
      absl::StrAppend(&s, " step ", *env.slurm_job_id, ".", *env.slurm_step_id);
    }
    if (env.slurm_procid.has_value()) {
      absl::StrAppend(&s, " task ", *env.slurm_procid);
      if (env.slurm_ntasks.has_value()) {
        absl::StrAppend(&s, " of ", *env.slurm_ntasks);
      }
    }
  }
  return s;
}

}  // namespace ringleader
