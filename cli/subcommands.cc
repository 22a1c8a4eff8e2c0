#include "cli/subcommands.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/commands.h"
#include "cli/logs_command.h"
#include "cli/submit_spec.h"
#include "cli/watch_command.h"

namespace ringleader::cli {
namespace {

void NoArgs(CLI::App*, SubcommandArgs*) {}

void AddJobArg(CLI::App* command, SubcommandArgs* args) {
  command->add_option("JOB", args->job_id, "Job id")->required();
}

void AddListArgs(CLI::App* command, SubcommandArgs* args) {
  command->add_option("--state", args->states,
                      "Only jobs in these states, comma separated: "
                      "pending,rendezvous,running,restarting,succeeded,failed,"
                      "cancelled");
}

void AddSubmitArgs(CLI::App* command, SubcommandArgs* args) {
  CLI::Option* file_flag = command->add_option(
      "-f,--file", args->file,
      "Job spec: .textproto/.txtpb/.pbtxt/.txt (text format) or .json; job "
      "flags given too override its fields");
  command->add_option("FILE", args->file, "Same as --file")
      ->excludes(file_flag);
  command->add_flag("--watch", args->watch,
                    "Follow the job after submitting, as `ringctl watch`");
  AddSpecFlags(command, &args->overrides);
}

void AddLogsArgs(CLI::App* command, SubcommandArgs* args) {
  AddJobArg(command, args);
  command->add_option("--rank", args->rank, "Only this rank's lines");
  command->add_option("--since", args->since,
                      "Only lines of the last D (e.g. 30s, 10m, 1h30m)");
  command->add_option("--tail", args->tail,
                      "Only the last N lines (0: all the coordinator keeps)");
  command->add_flag("-f,--follow", args->follow,
                    "Keep printing new lines until the job ends");
}

CommandStatus Submit(const SubcommandContext& c, const SubcommandArgs& args) {
  absl::StatusOr<v1::JobSpec> spec = BuildSubmitSpec(args.file, args.overrides);
  if (!spec.ok()) {
    return CommandStatus::Usage(std::string(spec.status().message()));
  }
  std::string id;
  CommandStatus status = RunSubmit(c.config, c.client, *spec,
                                   /*one_line_json=*/args.watch, c.out, &id);
  if (!status.ok() || !args.watch) return status;
  return RunWatch(c.config, c.client, id, c.out, c.straggler_factor);
}

void AddGetArgs(CLI::App* command, SubcommandArgs* args) {
  AddJobArg(command, args);
  command->add_flag(
      "--history", args->history,
      "Print the job's training curves instead: per optimizer step the "
      "loss, learning rate, gradient norm and samples/s, and each epoch's "
      "evaluation (--output=json: the whole series, with per-rank step "
      "time and data-wait share)");
}

CommandStatus Get(const SubcommandContext& c, const SubcommandArgs& args) {
  if (args.history)
    return RunGetHistory(c.config, c.client, args.job_id, c.out);
  return RunGet(c.config, c.client, args.job_id, c.out);
}

CommandStatus List(const SubcommandContext& c, const SubcommandArgs& args) {
  return RunList(c.config, c.client, args.states, c.out);
}

CommandStatus Cancel(const SubcommandContext& c, const SubcommandArgs& args) {
  return RunCancel(c.config, c.client, args.job_id, c.out);
}

CommandStatus Delete(const SubcommandContext& c, const SubcommandArgs& args) {
  return RunDelete(c.config, c.client, args.job_id, c.out);
}

CommandStatus Watch(const SubcommandContext& c, const SubcommandArgs& args) {
  return RunWatch(c.config, c.client, args.job_id, c.out, c.straggler_factor);
}

CommandStatus Logs(const SubcommandContext& c, const SubcommandArgs& args) {
  LogsOptions options;
  if (args.rank != -1) options.rank = args.rank;
  if (!args.since.empty() && !absl::ParseDuration(args.since, &options.since)) {
    return CommandStatus::Usage(absl::StrCat(
        "--since: ", args.since, " is not a duration (e.g. 30s, 10m, 1h30m)"));
  }
  options.tail = args.tail;
  options.follow = args.follow;
  return RunLogs(c.config, c.client, args.job_id, options, c.out);
}

CommandStatus Workers(const SubcommandContext& c, const SubcommandArgs&) {
  return RunWorkers(c.config, c.client, c.out);
}

constexpr Subcommand kSubcommands[] = {
    {"submit",
     "Submit a job from a spec file and/or flags; prints its id. The spec is "
     "validated here before it is sent.",
     AddSubmitArgs, Submit},
    {"get", "Show one job (--history: its training curves)", AddGetArgs, Get},
    {"list", "List jobs", AddListArgs, List},
    {"cancel", "Cancel a job", AddJobArg, Cancel},
    {"delete",
     "Delete a finished (succeeded, failed or cancelled) job from the "
     "coordinator; its checkpoints stay on disk",
     AddJobArg, Delete},
    {"watch",
     "Follow a job until it ends; exit 0 if it succeeded, 1 if it failed or "
     "was cancelled",
     AddJobArg, Watch},
    {"logs",
     "Print what the job's workers logged while serving it, every rank's "
     "lines in time order (the coordinator keeps each rank's last lines)",
     AddLogsArgs, Logs},
    {"workers", "List the registered worker daemons", NoArgs, Workers},
};

}  // namespace

absl::Span<const Subcommand> Subcommands() { return kSubcommands; }

}  // namespace ringleader::cli
