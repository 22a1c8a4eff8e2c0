#ifndef RINGLEADER_COMMON_SIGNAL_WATCH_H_
#define RINGLEADER_COMMON_SIGNAL_WATCH_H_

// Termination signals handled on a thread, not in a signal handler. A
// handler may only do what is async-signal-safe (set a flag, write to a
// pipe), and the daemons' responses (stop, preempt, drain) take locks. So
// the signals are blocked in every thread and one thread of its own waits
// for them with sigwait(2) and calls back, in ordinary thread context.
//
// Block() must run before the process starts other threads (gRPC's, the
// daemons'): threads inherit the mask, and a thread that does not block a
// signal takes it with its default action (terminate). Thread-safe.

#include <atomic>
#include <csignal>
#include <functional>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace ringleader {

class SignalWatch {
 public:
  // Called once per signal received, on the watch's thread.
  using Handler = std::function<void(int signal)>;

  // Blocks `signals` in the calling thread (and so in the threads it
  // starts from now on).
  static absl::Status Block(const std::vector<int>& signals);

  // Starts the thread that waits for `signals` (Block()ed before) and
  // runs `handler` for each.
  SignalWatch(std::vector<int> signals, Handler handler);
  // Stops the thread (it is woken with one of its signals, sent to
  // itself, which the handler does not see).
  ~SignalWatch();

  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

 private:
  void Loop();

  const std::vector<int> signals_;
  const Handler handler_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_SIGNAL_WATCH_H_
