#include "worker/train/checkpoint/resume.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ringleader {

std::string CheckpointPath(const std::string& dir, const std::string& name,
                           int64_t step) {
  return absl::StrCat(dir, "/", name, "-step", step, ".ckpt");
}

bool IsUnreadableCheckpoint(const absl::Status& s) {
  return absl::IsDataLoss(s) || absl::IsNotFound(s) ||
         absl::IsInvalidArgument(s);
}

absl::StatusOr<ResumeChoice> ChooseCheckpoint(
    const std::vector<v1::CheckpointRecord>& candidates,
    const std::function<absl::Status(const v1::CheckpointRecord&)>& load) {
  ResumeChoice choice;
  for (size_t i = 0; i < candidates.size(); ++i) {
    absl::Status s = load(candidates[i]);
    if (s.ok()) {
      choice.index = static_cast<int>(i);
      return choice;
    }
    if (!IsUnreadableCheckpoint(s)) return s;
    choice.skipped.push_back(
        absl::StrCat(candidates[i].path(), ": ", s.message()));
  }
  return choice;
}

std::vector<int64_t> ResumeVote(int index, size_t num_candidates) {
  std::vector<int64_t> vote(num_candidates + 1, 0);
  const bool valid = index >= 0 && static_cast<size_t>(index) < num_candidates;
  vote[valid ? static_cast<size_t>(index) : num_candidates] = 1;
  return vote;
}

absl::StatusOr<int> AgreedCheckpoint(
    const std::vector<int64_t>& summed_votes, int world_size,
    const std::vector<v1::CheckpointRecord>& candidates,
    const ResumeChoice& mine) {
  const size_t n = candidates.size();
  if (summed_votes.size() != n + 1) {
    return absl::InternalError(absl::StrCat("resume vote has ",
                                            summed_votes.size(),
                                            " counters, expected ", n + 1));
  }
  int64_t total = 0;
  for (int64_t v : summed_votes) {
    if (v < 0) return absl::InternalError("resume vote has a negative count");
    total += v;
  }
  if (total != world_size) {
    return absl::InternalError(absl::StrCat(
        "resume votes add up to ", total, ", not the world size ", world_size));
  }
  for (size_t i = 0; i < n; ++i) {
    if (summed_votes[i] == world_size) return static_cast<int>(i);
  }
  if (summed_votes[n] == world_size) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no committed checkpoint could be read (", n,
        " tried, newest first): ", absl::StrJoin(mine.skipped, "; ")));
  }
  std::vector<std::string> parts;
  for (size_t i = 0; i <= n; ++i) {
    if (summed_votes[i] == 0) continue;
    parts.push_back(i < n ? absl::StrCat(summed_votes[i], " loaded checkpoint ",
                                         candidates[i].checkpoint_id(), " (",
                                         candidates[i].path(), ")")
                          : absl::StrCat(summed_votes[i], " could read none"));
  }
  return absl::FailedPreconditionError(
      absl::StrCat("ranks disagree on the checkpoint to resume from (",
                   absl::StrJoin(parts, ", "),
                   "): every rank must see the same checkpoint directory"));
}

absl::Status PruneCheckpointFiles(const std::string& dir,
                                  const std::string& name,
                                  int64_t committed_step, int keep) {
  const std::string prefix = absl::StrCat(name, "-step");
  const std::string suffix = ".ckpt";
  std::vector<std::pair<int64_t, std::filesystem::path>> files;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot list ", dir, ": ", ec.message()));
  }
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string file = it->path().filename().string();
    if (!absl::StartsWith(file, prefix) || !absl::EndsWith(file, suffix) ||
        file.size() <= prefix.size() + suffix.size()) {
      continue;
    }
    const std::string digits =
        file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
    int64_t step;
    if (!std::all_of(digits.begin(), digits.end(),
                     [](char c) { return c >= '0' && c <= '9'; }) ||
        !absl::SimpleAtoi(digits, &step) || step > committed_step) {
      continue;
    }
    files.emplace_back(step, it->path());
  }
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot list ", dir, ": ", ec.message()));
  }
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  absl::Status first;
  for (size_t i = static_cast<size_t>(std::max(keep, 0)); i < files.size();
       ++i) {
    if (!std::filesystem::remove(files[i].second, ec) && ec && first.ok()) {
      first = absl::InternalError(absl::StrCat(
          "cannot delete ", files[i].second.string(), ": ", ec.message()));
    }
  }
  return first;
}

}  // namespace ringleader
