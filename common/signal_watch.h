#ifndef RINGLEADER_COMMON_SIGNAL_WATCH_H_
#define RINGLEADER_COMMON_SIGNAL_WATCH_H_

// Termination signals (SIGTERM, SIGINT) answered in ordinary thread context.
// The daemons' responses (stop, preempt, drain) take locks, which no signal
// handler may. So the handler Install() sets with sigaction(2) only writes
// the signal's number to a pipe (async-signal-safe), and a SignalWatch's
// thread reads the pipe and calls back.
//
// Why a handler and not a mask with sigwait(2) (the design before issue 48):
// a mask set in main() does not cover threads that libraries start before
// main (OpenBLAS starts its pool when it loads), and a process-directed
// signal goes to any thread that does not block it; with the default action
// there, the process died mid-step. A handler is process-wide, so the signal
// is taken whichever thread the kernel picks, and a signal sent to one
// thread (tgkill) is taken on that thread instead of staying pending on a
// thread that blocks it. It also makes the signal count where the process is
// PID 1 of a namespace (a container), which drops signals whose action is
// the default.
//
// Install() first thing in main(): a signal that arrives before a
// SignalWatch reads the pipe waits there (up to the pipe's size). Thread-safe.

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

  // Installs the pipe-writing handler for `signals` (process-wide, SA_RESTART)
  // and unblocks them in the calling thread. May be called again, with more
  // signals; the pipe is made once.
  static absl::Status Install(const std::vector<int>& signals);

  // Starts the thread that reads the signals Install()ed and runs `handler`
  // for each. At most one SignalWatch at a time: the pipe has one reader.
  explicit SignalWatch(Handler handler);
  // Stops the thread (a byte no signal writes wakes it).
  ~SignalWatch();

  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

 private:
  void Loop();

  const Handler handler_;
  std::thread thread_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_SIGNAL_WATCH_H_
