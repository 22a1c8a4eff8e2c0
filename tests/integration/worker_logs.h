#ifndef RINGLEADER_TESTS_INTEGRATION_WORKER_LOGS_H_
#define RINGLEADER_TESTS_INTEGRATION_WORKER_LOGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace ringleader::testing {

// One "samples generation=G rank=R epoch=E step=S ids=a,b,..." line that a
// worker run with GLOG_v=1 logs per batch.
struct SampleLine {
  int64_t generation = 0, rank = 0, epoch = 0, step = 0;
  std::vector<int64_t> ids;
  // When it was logged (InfinitePast if the line has no glog prefix).
  absl::Time time = absl::InfinitePast();
};

// When a glog line ("I20261204 09:10:54.275192 123 file.cc:1] ...") was
// logged, read in the local time zone as glog writes it; nullopt for a line
// without that prefix.
std::optional<absl::Time> GlogTime(const std::string& line);

// The complete sample lines of a worker log (a killed process may leave
// half a line at the end).
std::vector<SampleLine> ParseSampleLines(const std::string& log);

// One "resumes from checkpoint ID (path) at epoch E step S offset O" line:
// where a generation resumed.
struct ResumeLine {
  int64_t checkpoint_id = 0, epoch = 0, step = 0, offset = 0;
  // Recovered from a peer's memory (checkpoint_id 0), not from a file.
  bool from_memory = false;
  // From memory: the rank (in `generation`) whose state was broadcast.
  int64_t source_rank = -1;
  // The generation of the rank line before it (0: none).
  int64_t generation = 0;
};

// Every resume line of a worker log, in log order: "resumes from checkpoint
// ..." and "recovers from rank R's memory ...".
std::vector<ResumeLine> ParseResumeLines(const std::string& log);

// One "rank R state digest at step S (WHEN): HEX" line (a hash of the whole
// training state: worker/train/state_digest.h), WHEN "resumed" or "end".
struct DigestLine {
  int64_t generation = 0;  // Of the rank line before it.
  int64_t rank = 0, step = 0;
  std::string when, digest;
};

std::vector<DigestLine> ParseDigestLines(const std::string& log);

// One "keeps its state at epoch E step S offset O" line: what a rank kept
// when a generation ended under it.
struct KeepLine {
  int64_t generation = 0;  // Of the rank line before it.
  int64_t epoch = 0, step = 0, offset = 0;
};

std::vector<KeepLine> ParseKeepLines(const std::string& log);

// What the exact-once check counts over a whole job: the sample ids that
// went into the model, per epoch, and the batches trained but never
// applied. A generation's batches count up to the step the next generation
// that resumed (any later one: one that failed during its recovery never
// trained) resumed at; the last generation's all count.
struct AppliedSamples {
  std::map<int64_t, std::multiset<int64_t>> by_epoch;
  int64_t redone_batches = 0;
  // Generation -> the step its ranks resumed at (every rank's resume line
  // must agree; `disagreement` says where they did not).
  std::map<int64_t, int64_t> resumed_at;
  std::string disagreement;
};

// From every worker log of a job run with GLOG_v=1.
AppliedSamples CountAppliedSamples(const std::vector<std::string>& logs);

// What an exact-once job applied: `epochs` epochs, each with every one of
// `samples` sample ids, at most `padded` of them twice (a world size that
// grows mid-epoch pads the rest of the epoch to a multiple of the new size,
// as DistributedSampler with drop_last false pads every epoch: at most
// world_size - 1), and at most `max_redone` batches trained but never
// applied (-1: any number).
struct ExactlyOnce {
  int64_t epochs = 0;
  int64_t samples = 0;
  int64_t padded = 0;
  int64_t max_redone = -1;
};

// Where `applied` breaks `want`, one clause per violation ("" when it
// holds), so a test's EXPECT_EQ(..., "") prints every one.
std::string ExactlyOnceViolations(const AppliedSamples& applied,
                                  const ExactlyOnce& want);

// The optimizer step of each resume line, in log order.
std::vector<int64_t> ParseResumeSteps(const std::string& log);

// One "plans N optimizer steps at world size W; learning-rate decay horizon
// H" line: what a generation planned when it started.
struct PlanLine {
  int64_t planned_steps = 0, world_size = 0, horizon = 0;
};

// Every plan line of a worker log, in log order.
std::vector<PlanLine> ParsePlanLines(const std::string& log);

// One "generation G: rank R of W" line: the rank a worker took in a
// generation it joined.
struct RankLine {
  int64_t generation = 0, rank = 0, world_size = 0;
};

// Every rank line of a worker log, in log order.
std::vector<RankLine> ParseRankLines(const std::string& log);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_INTEGRATION_WORKER_LOGS_H_
