#ifndef RINGLEADER_BENCH_NETDELAY_DELAY_LINE_H_
#define RINGLEADER_BENCH_NETDELAY_DELAY_LINE_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace ringleader {

// The scheduling core of netdelay (bench/crosshost/netdelay): packets, known by their
// queue ids, are held for a fixed delay after they arrive and released in
// arrival order. A fixed delay keeps arrival order and deadline order the
// same, so one FIFO suffices and nothing is reordered. At most `capacity`
// packets are held; one more is refused (the caller drops it) and counted,
// as a router's full buffer would. Time is passed in, never read, so the
// logic runs on a fake clock in tests.
class DelayLine {
 public:
  using Clock = std::chrono::steady_clock;

  struct Counters {
    uint64_t admitted = 0;
    uint64_t released = 0;
    uint64_t dropped = 0;  // Refused: the line held `capacity` packets.
    size_t max_depth = 0;  // Most packets held at once.
    // How late releases were, past their deadlines (the event loop's
    // wake-up error and batching): total and worst.
    Clock::duration total_lateness{0};
    Clock::duration max_lateness{0};
    uint64_t late_over_1ms = 0;  // Releases more than 1 ms late.
  };

  DelayLine(Clock::duration delay, size_t capacity);

  // Holds packet `id`, arrived at `now`, until now + delay. False when the
  // line is full: the packet is not held and counts as dropped.
  bool Admit(uint32_t id, Clock::time_point now);

  // The earliest deadline of a held packet, if any.
  std::optional<Clock::time_point> NextDeadline() const;

  // Appends to `out`, in arrival order, every held packet whose deadline is
  // at or before `now`, and stops holding them.
  void ReleaseDue(Clock::time_point now, std::vector<uint32_t>* out);

  // Appends every held packet regardless of its deadline (shutting down:
  // nothing the line took is lost). Lateness is not counted for these.
  void ReleaseAll(std::vector<uint32_t>* out);

  size_t depth() const { return held_.size(); }
  const Counters& counters() const { return counters_; }

 private:
  struct Held {
    uint32_t id;
    Clock::time_point deadline;
  };
  const Clock::duration delay_;
  const size_t capacity_;
  std::deque<Held> held_;
  Counters counters_;
};

}  // namespace ringleader

#endif  // RINGLEADER_BENCH_NETDELAY_DELAY_LINE_H_
