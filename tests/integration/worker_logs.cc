#include "tests/integration/worker_logs.h"

#include <regex>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ringleader::testing {

std::vector<SampleLine> ParseSampleLines(const std::string& log) {
  std::vector<SampleLine> out;
  const std::regex re(
      "samples generation=([0-9]+) rank=([0-9]+) epoch=([0-9]+) "
      "step=([0-9]+) ids=([0-9,]+)$");
  std::vector<std::string> lines = absl::StrSplit(log, '\n');
  if (!log.empty() && log.back() != '\n') lines.pop_back();
  for (const std::string& line : lines) {
    std::smatch m;
    if (!std::regex_search(line, m, re)) continue;
    SampleLine s;
    s.generation = std::stoll(m[1]);
    s.rank = std::stoll(m[2]);
    s.epoch = std::stoll(m[3]);
    s.step = std::stoll(m[4]);
    bool ok = true;
    for (absl::string_view id : absl::StrSplit(std::string(m[5]), ',')) {
      int64_t v;
      ok = ok && absl::SimpleAtoi(id, &v);
      s.ids.push_back(v);
    }
    s.time = GlogTime(line).value_or(absl::InfinitePast());
    if (ok) out.push_back(std::move(s));
  }
  return out;
}

namespace {

// The generation of the last "generation G: rank R of W" line, or 0.
int64_t RankLineGeneration(const std::string& line, int64_t current) {
  static const std::regex* re =
      new std::regex("generation ([0-9]+): rank [0-9]+ of [0-9]+$");
  std::smatch m;
  return std::regex_search(line, m, *re) ? std::stoll(m[1]) : current;
}

std::vector<std::string> Lines(const std::string& log) {
  return absl::StrSplit(log, '\n');
}

}  // namespace

std::vector<ResumeLine> ParseResumeLines(const std::string& log) {
  std::vector<ResumeLine> out;
  const std::regex file(
      "resumes from checkpoint ([0-9]+) \\(.*\\) at epoch ([0-9]+) step "
      "([0-9]+) offset ([0-9]+)");
  const std::regex memory(
      "recovers from rank ([0-9]+)'s memory at epoch ([0-9]+) step ([0-9]+) "
      "offset ([0-9]+)");
  int64_t generation = 0;
  for (const std::string& line : Lines(log)) {
    generation = RankLineGeneration(line, generation);
    std::smatch m;
    if (std::regex_search(line, m, file)) {
      out.push_back({std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3]),
                     std::stoll(m[4]), false, -1, generation});
    } else if (std::regex_search(line, m, memory)) {
      out.push_back({0, std::stoll(m[2]), std::stoll(m[3]), std::stoll(m[4]),
                     true, std::stoll(m[1]), generation});
    }
  }
  return out;
}

std::vector<DigestLine> ParseDigestLines(const std::string& log) {
  std::vector<DigestLine> out;
  const std::regex re(
      "rank ([0-9]+) state digest at step ([0-9]+) \\(([a-z]+)\\): "
      "([0-9a-f]+)$");
  int64_t generation = 0;
  for (const std::string& line : Lines(log)) {
    generation = RankLineGeneration(line, generation);
    std::smatch m;
    if (!std::regex_search(line, m, re)) continue;
    out.push_back({generation, std::stoll(m[1]), std::stoll(m[2]), m[3], m[4]});
  }
  return out;
}

std::vector<KeepLine> ParseKeepLines(const std::string& log) {
  std::vector<KeepLine> out;
  const std::regex re(
      "keeps its state at epoch ([0-9]+) step ([0-9]+) offset ([0-9]+)");
  int64_t generation = 0;
  for (const std::string& line : Lines(log)) {
    generation = RankLineGeneration(line, generation);
    std::smatch m;
    if (!std::regex_search(line, m, re)) continue;
    out.push_back(
        {generation, std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3])});
  }
  return out;
}

AppliedSamples CountAppliedSamples(const std::vector<std::string>& logs) {
  AppliedSamples out;
  for (const std::string& log : logs) {
    for (const ResumeLine& r : ParseResumeLines(log)) {
      auto [it, inserted] = out.resumed_at.emplace(r.generation, r.step);
      if (!inserted && it->second != r.step) {
        absl::StrAppend(&out.disagreement, "generation ", r.generation,
                        " resumed at steps ", it->second, " and ", r.step,
                        "; ");
      }
    }
  }
  for (const std::string& log : logs) {
    for (const SampleLine& l : ParseSampleLines(log)) {
      auto next = out.resumed_at.upper_bound(l.generation);
      if (next != out.resumed_at.end() && l.step > next->second) {
        ++out.redone_batches;
        continue;
      }
      out.by_epoch[l.epoch].insert(l.ids.begin(), l.ids.end());
    }
  }
  return out;
}

std::string ExactlyOnceViolations(const AppliedSamples& applied,
                                  const ExactlyOnce& want) {
  std::vector<std::string> out;
  if (!applied.disagreement.empty()) {
    out.emplace_back(absl::StripSuffix(applied.disagreement, "; "));
  }
  if (want.max_redone >= 0 && applied.redone_batches > want.max_redone) {
    out.push_back(absl::StrCat(applied.redone_batches,
                               " batches trained but not applied, over ",
                               want.max_redone));
  }
  if (static_cast<int64_t>(applied.by_epoch.size()) != want.epochs) {
    out.push_back(absl::StrCat(applied.by_epoch.size(), " epochs applied, not ",
                               want.epochs));
  }
  for (const auto& [epoch, ids] : applied.by_epoch) {
    const int64_t n = ids.size();
    if (n < want.samples || n > want.samples + want.padded) {
      out.push_back(absl::StrCat(
          "epoch ", epoch, ": ", n, " samples applied, not ", want.samples,
          want.padded ? absl::StrCat(" to ", want.samples + want.padded) : ""));
    }
    const int64_t distinct = std::set<int64_t>(ids.begin(), ids.end()).size();
    if (distinct != want.samples) {
      out.push_back(absl::StrCat("epoch ", epoch, ": ", distinct,
                                 " distinct samples, not ", want.samples));
    }
  }
  return absl::StrJoin(out, "; ");
}

std::vector<int64_t> ParseResumeSteps(const std::string& log) {
  std::vector<int64_t> out;
  for (const ResumeLine& r : ParseResumeLines(log)) out.push_back(r.step);
  return out;
}

std::vector<PlanLine> ParsePlanLines(const std::string& log) {
  std::vector<PlanLine> out;
  const std::regex re(
      "plans ([0-9]+) optimizer steps at world size ([0-9]+); learning-rate "
      "decay horizon ([0-9]+)");
  for (const std::string& line :
       std::vector<std::string>(absl::StrSplit(log, '\n'))) {
    std::smatch m;
    if (!std::regex_search(line, m, re)) continue;
    out.push_back({std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3])});
  }
  return out;
}

std::optional<absl::Time> GlogTime(const std::string& line) {
  // "I20261204 09:10:54.275192": severity, date, time to the microsecond.
  // The date has no separators, which absl's greedy %Y cannot split.
  constexpr size_t kLength = 25;
  if (line.size() < kLength ||
      std::string("IWEF").find(line[0]) == std::string::npos) {
    return std::nullopt;
  }
  const std::string stamp =
      absl::StrCat(line.substr(1, 4), "-", line.substr(5, 2), "-",
                   line.substr(7, 2), line.substr(9, kLength - 9));
  absl::Time t;
  std::string err;
  if (!absl::ParseTime("%Y-%m-%d %H:%M:%E6S", stamp, absl::LocalTimeZone(), &t,
                       &err)) {
    return std::nullopt;
  }
  return t;
}

std::vector<RankLine> ParseRankLines(const std::string& log) {
  std::vector<RankLine> out;
  const std::regex re("generation ([0-9]+): rank ([0-9]+) of ([0-9]+)$");
  for (const std::string& line :
       std::vector<std::string>(absl::StrSplit(log, '\n'))) {
    std::smatch m;
    if (!std::regex_search(line, m, re)) continue;
    out.push_back({std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3])});
  }
  return out;
}

}  // namespace ringleader::testing
