#include "common/systemd/notify.h"

#include <systemd/sd-daemon.h>

#include <cstdint>
#include <utility>

namespace ringleader {

bool SdNotify(const std::string& state) {
  return sd_notify(/*unset_environment=*/0, state.c_str()) > 0;
}

std::optional<absl::Duration> SdWatchdogTimeout() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(/*unset_environment=*/0, &usec) <= 0 || usec == 0) {
    return std::nullopt;
  }
  return absl::Microseconds(static_cast<int64_t>(usec));
}

SdWatchdog::SdWatchdog(absl::Duration period, std::function<bool()> alive,
                       Sender send)
    : period_(std::max(period, absl::Milliseconds(1))),
      alive_(std::move(alive)),
      send_(std::move(send)) {
  thread_ = std::thread([this] { Loop(); });
}

SdWatchdog::~SdWatchdog() { Stop(); }

std::unique_ptr<SdWatchdog> SdWatchdog::StartIfEnabled(
    std::function<bool()> alive) {
  std::optional<absl::Duration> timeout = SdWatchdogTimeout();
  if (!timeout.has_value()) return nullptr;
  return std::make_unique<SdWatchdog>(*timeout / 2, std::move(alive));
}

void SdWatchdog::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void SdWatchdog::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stop_) return;
    }
    // Outside the lock: a liveness check that hangs must stop the pings,
    // and Stop() then waits for it like for any caller of the daemon.
    if (alive_()) send_("WATCHDOG=1");
    absl::MutexLock lock(&mu_);
    auto stopping = [this]()
                        ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
    mu_.AwaitWithTimeout(absl::Condition(&stopping), period_);
  }
}

}  // namespace ringleader
