#ifndef RINGLEADER_WORKER_TIMELINE_PHASE_H_
#define RINGLEADER_WORKER_TIMELINE_PHASE_H_

// What this worker is doing now, for its heartbeats: the coordinator names
// the rank the others wait for from them (coordinator/stall_watch.h). The
// training thread sets it at the timeline's span points (TimelineSpan), so
// it costs a clock read and a few relaxed atomic stores per span, no lock
// and no allocation; the heartbeat thread reads it. The numbers are
// v1::WorkerPhase's (worker/phase_report.cc checks them).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace ringleader {

enum class Phase : uint8_t {
  kUnspecified = 0,
  kIdle = 1,
  kRendezvous = 2,
  kDataLoading = 3,
  kForward = 4,
  kBackward = 5,
  kAllReduceWait = 6,
  kBufferSync = 7,
  kOptimizer = 8,
  kCheckpoint = 9,
  kRecovery = 10,
  kEvaluation = 11,
};

class PhaseClock {
 public:
  // The phase and when it was entered, packed in one word so that a reader
  // never pairs a phase with another phase's start.
  using Word = uint64_t;

  struct Reading {
    Phase phase = Phase::kUnspecified;
    int64_t in_phase_ms = 0;   // How long it has been in it.
    int64_t step = 0;          // The step the phase belongs to (0: none).
    int32_t bucket = -1;       // In kAllReduceWait: the bucket waited for.
    int64_t step_time_ms = 0;  // Recent mean step time (0: none yet).
  };

  // Enters `phase` now; returns what it replaces (for Restore).
  Word Enter(Phase phase) {
    return word_.exchange(Pack(phase, NowMs()), std::memory_order_relaxed);
  }
  static Phase PhaseOf(Word w) { return static_cast<Phase>(w >> kTimeBits); }
  // Back to a phase Enter returned, with its original start.
  void Restore(Word previous) {
    word_.store(previous, std::memory_order_relaxed);
  }
  // The optimizer step (1-based) the following phases belong to. A step
  // above the last one ends that one: its wall time feeds step_time_ms.
  void SetStep(int64_t step) {
    const int64_t last = step_.exchange(step, std::memory_order_relaxed);
    if (step == last) return;
    const int64_t now = NowUs();
    const int64_t started =
        step_started_us_.exchange(now, std::memory_order_relaxed);
    // The first step of a generation begins with its setup: not counted.
    if (started == 0 || last == 0 || step != last + 1) return;
    const int64_t took = std::max<int64_t>(now - started, 1);
    const int64_t mean = mean_step_us_.load(std::memory_order_relaxed);
    mean_step_us_.store(mean == 0 ? took : mean + (took - mean) / 8,
                        std::memory_order_relaxed);
  }
  void SetBucket(int32_t bucket) {
    bucket_.store(bucket, std::memory_order_relaxed);
  }
  // A new generation: its steps are timed afresh.
  void ResetSteps() {
    step_.store(0, std::memory_order_relaxed);
    step_started_us_.store(0, std::memory_order_relaxed);
    mean_step_us_.store(0, std::memory_order_relaxed);
    bucket_.store(-1, std::memory_order_relaxed);
  }

  Reading Read() const {
    Reading r;
    const Word w = word_.load(std::memory_order_relaxed);
    r.phase = PhaseOf(w);
    const int64_t entered = static_cast<int64_t>(w & kTimeMask);
    r.in_phase_ms = entered == 0 ? 0 : std::max<int64_t>(NowMs() - entered, 0);
    r.step = step_.load(std::memory_order_relaxed);
    r.bucket = r.phase == Phase::kAllReduceWait
                   ? bucket_.load(std::memory_order_relaxed)
                   : -1;
    const int64_t mean_us = mean_step_us_.load(std::memory_order_relaxed);
    r.step_time_ms = mean_us == 0 ? 0 : std::max<int64_t>(mean_us / 1000, 1);
    return r;
  }

 private:
  static constexpr int kTimeBits = 56;
  static constexpr Word kTimeMask = (Word{1} << kTimeBits) - 1;

  static Word Pack(Phase phase, int64_t ms) {
    return (static_cast<Word>(phase) << kTimeBits) |
           (static_cast<Word>(ms) & kTimeMask);
  }
  static int64_t NowUs() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  // steady_clock's epoch is boot: never 0 on a running system.
  static int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  std::atomic<Word> word_{0};
  std::atomic<int64_t> step_{0};
  std::atomic<int64_t> step_started_us_{0};
  // Exponential mean of the steps' wall times (weight 1/8 for the newest).
  std::atomic<int64_t> mean_step_us_{0};
  std::atomic<int32_t> bucket_{-1};
};

// Enters `phase` for the enclosing scope. The phases of a step follow one
// another, so the last one stays until the next begins (what a rank does
// between two spans is short and belongs to the one before); a phase that
// encloses others (a checkpoint, a recovery, an evaluation, each with its
// collectives) is back, with its original start, when the inner one ends.
// A null clock costs one branch.
class PhaseScope {
 public:
  PhaseScope(PhaseClock* clock, Phase phase) : clock_(clock) {
    if (clock_ != nullptr) previous_ = clock_->Enter(phase);
  }
  ~PhaseScope() {
    if (clock_ != nullptr && Encloses(PhaseClock::PhaseOf(previous_))) {
      clock_->Restore(previous_);
    }
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

  static bool Encloses(Phase p) {
    return p == Phase::kCheckpoint || p == Phase::kRecovery ||
           p == Phase::kEvaluation;
  }

 private:
  PhaseClock* const clock_;
  PhaseClock::Word previous_ = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TIMELINE_PHASE_H_
