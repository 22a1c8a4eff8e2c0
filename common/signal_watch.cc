#include "common/signal_watch.h"

#include <pthread.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace ringleader {
namespace {

sigset_t SetOf(const std::vector<int>& signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) sigaddset(&set, s);
  return set;
}

}  // namespace

absl::Status SignalWatch::Block(const std::vector<int>& signals) {
  const sigset_t set = SetOf(signals);
  if (const int err = pthread_sigmask(SIG_BLOCK, &set, nullptr); err != 0) {
    return absl::InternalError(
        absl::StrCat("pthread_sigmask: ", std::strerror(err)));
  }
  return absl::OkStatus();
}

SignalWatch::SignalWatch(std::vector<int> signals, Handler handler)
    : signals_(std::move(signals)), handler_(std::move(handler)) {
  thread_ = std::thread([this] { Loop(); });
}

SignalWatch::~SignalWatch() {
  stopping_ = true;
  if (!signals_.empty()) pthread_kill(thread_.native_handle(), signals_[0]);
  thread_.join();
}

void SignalWatch::Loop() {
  const sigset_t set = SetOf(signals_);
  // Bounded by the process: it ends when the destructor wakes it.
  while (true) {
    int signal = 0;
    if (sigwait(&set, &signal) != 0) continue;
    if (stopping_) return;
    handler_(signal);
  }
}

}  // namespace ringleader
