#ifndef RINGLEADER_COMMON_SYSTEMD_NOTIFY_H_
#define RINGLEADER_COMMON_SYSTEMD_NOTIFY_H_

// systemd's notification protocol for Type=notify units, over libsystemd.
// Outside systemd ($NOTIFY_SOCKET unset) every call is a no-op, so daemons
// call these unconditionally.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ringleader {

// Sends `state` ("READY=1", "STATUS=...", "STOPPING=1", "WATCHDOG=1", several
// separated by newlines) to $NOTIFY_SOCKET. True if it was sent.
bool SdNotify(const std::string& state);

// The interval within which systemd expects WATCHDOG=1 ($WATCHDOG_USEC, for
// this process per $WATCHDOG_PID), or nullopt when no watchdog is set.
std::optional<absl::Duration> SdWatchdogTimeout();

// A thread that sends WATCHDOG=1 every `period` while `alive()` returns
// true. `alive` is the daemon's real liveness check (it may block: a hung
// daemon then stops pinging and systemd restarts it), never a constant.
// Thread-safe; the destructor stops and joins the thread.
class SdWatchdog {
 public:
  using Sender = std::function<void(const std::string&)>;

  SdWatchdog(
      absl::Duration period, std::function<bool()> alive,
      Sender send = [](const std::string& s) { SdNotify(s); });
  ~SdWatchdog();
  SdWatchdog(const SdWatchdog&) = delete;
  SdWatchdog& operator=(const SdWatchdog&) = delete;

  // Pings at half of SdWatchdogTimeout(), as sd_watchdog_enabled(3)
  // recommends; nullptr when systemd set no watchdog.
  static std::unique_ptr<SdWatchdog> StartIfEnabled(
      std::function<bool()> alive);

  absl::Duration period() const { return period_; }
  void Stop();

 private:
  void Loop();

  const absl::Duration period_;
  const std::function<bool()> alive_;
  const Sender send_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_SYSTEMD_NOTIFY_H_
