#ifndef RINGLEADER_WORKER_TIMELINE_TIMELINE_H_
#define RINGLEADER_WORKER_TIMELINE_TIMELINE_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "worker/timeline/phase.h"

namespace ringleader {

// One rank's timeline of a job (JobSpec.timeline_dir), written in the Chrome
// Trace Event Format that Perfetto and chrome://tracing open: complete
// events (ph "X", ts/dur in microseconds of the wall clock, so ranks on one
// host line up), pid = rank, one track (tid) for compute (data wait,
// forward, backward, optimizer) and one for communication (each bucket's
// all-reduce, from launch to completion), so their overlap shows.
//
// Only the optimizer steps [first step seen, first + max_steps) are kept,
// which bounds the file. A disabled timeline (empty path) costs one branch
// per call and writes nothing. Flush() writes the whole file atomically
// (common/atomic_file.h).
//
// Thread-safe: all-reduces complete on the communicator's thread.
class Timeline {
 public:
  enum class Track : int { kCompute = 1, kComm = 2 };

  struct Event {
    std::string name;
    Track track = Track::kCompute;
    int64_t ts_us = 0;
    int64_t dur_us = 0;
    int64_t step = 0;
    int64_t bucket = -1;  // -1: not a bucket's event.
    int64_t bytes = -1;
  };

  // `path` empty: disabled. `max_steps` <= 0 means kDefaultSteps.
  Timeline(std::string path, int rank, int64_t max_steps);
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  static constexpr int64_t kDefaultSteps = 200;

  // "<dir>/<job_id>-rank<R>.trace.json".
  static std::string PathFor(const std::string& dir, const std::string& job_id,
                             int rank);
  // Microseconds since the Unix epoch.
  static int64_t NowUs();

  bool enabled() const { return enabled_; }
  const std::string& path() const { return path_; }

  // Where the spans also say what the worker is doing (its heartbeats
  // carry it); null: nowhere. Set before the first span.
  void SetPhases(PhaseClock* phases) { phases_ = phases; }
  PhaseClock* phases() const { return phases_; }

  // The optimizer step (1-based) the following events belong to.
  void SetStep(int64_t step);
  int64_t step() const { return step_.load(std::memory_order_relaxed); }

  // Shown under "otherData" in the file (job id, generation...).
  void SetMetadata(const std::string& key, const std::string& value);

  // Records [start_us, end_us) on `track` for `step` if enabled and the step
  // is kept.
  void Record(const char* name, Track track, int64_t start_us, int64_t end_us,
              int64_t step, int64_t bucket = -1, int64_t bytes = -1);

  std::vector<Event> Events() const;
  // The whole trace document.
  std::string ToJson() const;
  // Writes ToJson() to path() atomically, creating the directory. OK and
  // nothing written when disabled.
  absl::Status Flush() const;

 private:
  const bool enabled_;
  const std::string path_;
  const int rank_;
  const int64_t max_steps_;
  PhaseClock* phases_ = nullptr;
  std::atomic<int64_t> step_{0};
  // First step seen by SetStep (0 until then).
  std::atomic<int64_t> first_step_{0};

  mutable absl::Mutex mu_;
  std::vector<Event> events_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<std::string, std::string>> metadata_
      ABSL_GUARDED_BY(mu_);
};

// Records the enclosing scope on the compute track, for the step current at
// construction, and puts the worker in `phase` (when the timeline has a
// PhaseClock) until the scope ends. With a null timeline, one branch; with a
// disabled one, the phase only.
class TimelineSpan {
 public:
  TimelineSpan(Timeline* timeline, const char* name,
               Phase phase = Phase::kUnspecified)
      : timeline_(timeline != nullptr && timeline->enabled() ? timeline
                                                             : nullptr),
        name_(name),
        phase_(timeline != nullptr && phase != Phase::kUnspecified
                   ? timeline->phases()
                   : nullptr,
               phase) {
    if (timeline_ != nullptr) {
      step_ = timeline_->step();
      start_us_ = Timeline::NowUs();
    }
  }
  ~TimelineSpan() {
    if (timeline_ != nullptr) {
      timeline_->Record(name_, Timeline::Track::kCompute, start_us_,
                        Timeline::NowUs(), step_);
    }
  }
  TimelineSpan(const TimelineSpan&) = delete;
  TimelineSpan& operator=(const TimelineSpan&) = delete;

 private:
  Timeline* const timeline_;
  const char* const name_;
  const PhaseScope phase_;
  int64_t step_ = 0;
  int64_t start_us_ = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TIMELINE_TIMELINE_H_
