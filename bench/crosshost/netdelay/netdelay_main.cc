// netdelay: a user-space delay line for emulated links (this kernel has no
// netem). Run inside a host's network namespace with a packet-filter rule
// that queues the host's ingress to it, e.g.
//   nft add table inet netdelay
//   nft add chain inet netdelay in '{ type filter hook input priority 0; }'
//   nft add rule inet netdelay in iifname != "lo" queue num 0
//   netdelay --queue=0 --delay_ms=2
// Every queued packet is held --delay_ms after it arrives and then accepted,
// in arrival order; more than --max_packets held at once are dropped and
// counted. On SIGTERM or SIGINT it accepts whatever it holds, unbinds, and
// prints its counters as one JSON line on stdout.
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/crosshost/netdelay/delay_line.h"
#include "bench/crosshost/netdelay/netdelay_options.h"
#include "bench/crosshost/netdelay/nfqueue.h"

ABSL_FLAG(int64_t, queue, 0, "NFQUEUE number to bind (0..65535).");
ABSL_FLAG(double, delay_ms, 0, "Hold each packet this long (0..60000 ms).");
ABSL_FLAG(int64_t, max_packets, 10000,
          "Packets held at once; more are dropped and counted.");
ABSL_FLAG(std::string, ready_file, "",
          "Written once the queue is bound (add the queue rule after it).");

namespace ringleader {
namespace {

using Clock = DelayLine::Clock;

// SIGTERM and SIGINT as a readable descriptor, so the event loop sees them.
int StopSignalFd() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) return -1;
  return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

// How long ppoll may sleep: until the next deadline, or indefinitely.
timespec* SleepUntil(const DelayLine& line, timespec* ts) {
  const auto next = line.NextDeadline();
  if (!next) return nullptr;
  const auto wait = std::max(Clock::duration(0), *next - Clock::now());
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait);
  ts->tv_sec = ns.count() / 1'000'000'000;
  ts->tv_nsec = ns.count() % 1'000'000'000;
  return ts;
}

absl::Status Release(NfQueue& q, const std::vector<uint32_t>& ids) {
  if (ids.empty()) return absl::OkStatus();
  return q.AcceptUpTo(ids.back());
}

// Holds and releases packets until a stop signal; then releases the rest.
absl::Status Run(NfQueue& q, DelayLine& line, int stop_fd) {
  std::vector<uint32_t> due;
  absl::Status verdicts = absl::OkStatus();
  for (;;) {
    pollfd fds[2] = {{q.fd(), POLLIN, 0}, {stop_fd, POLLIN, 0}};
    timespec ts;
    if (ppoll(fds, 2, SleepUntil(line, &ts), nullptr) < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("ppoll: ", std::strerror(errno)));
    }
    if (fds[1].revents & POLLIN) break;
    if (fds[0].revents & POLLIN) {
      if (absl::Status s = q.Drain(); !s.ok()) return s;
    }
    due.clear();
    line.ReleaseDue(Clock::now(), &due);
    if (absl::Status s = Release(q, due); !s.ok()) return s;
  }
  due.clear();
  line.ReleaseAll(&due);
  return Release(q, due);
}

void PrintCounters(const NetdelayOptions& o, const DelayLine& line,
                   const NfQueue& q) {
  const DelayLine::Counters& c = line.counters();
  const double us = 1e-3;  // per nanosecond
  const auto ns = [](Clock::duration d) {
    return static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  };
  std::cout << absl::StrFormat(
                   "{\"netdelay\": {\"queue\": %d, \"delay_ms\": %.3f, "
                   "\"admitted\": %d, \"released\": %d, \"dropped\": %d, "
                   "\"max_depth\": %d, \"socket_overruns\": %d, "
                   "\"mean_lateness_us\": %.1f, \"max_lateness_us\": %.1f, "
                   "\"late_over_1ms\": %d}}",
                   o.queue, ns(o.delay) * 1e-6, c.admitted, c.released,
                   c.dropped, c.max_depth, q.overruns(),
                   c.released ? ns(c.total_lateness) * us / c.released : 0.0,
                   ns(c.max_lateness) * us, c.late_over_1ms)
            << std::endl;
}

int Main(const NetdelayOptions& o) {
  // Wake-ups at the deadline, not up to 50 us after it (the default slack).
  prctl(PR_SET_TIMERSLACK, 1UL);
  const int stop_fd = StopSignalFd();
  if (stop_fd < 0) {
    std::cerr << "netdelay: signalfd: " << std::strerror(errno) << "\n";
    return 1;
  }
  DelayLine line(o.delay, o.max_packets);
  std::unique_ptr<NfQueue> queue;
  // The kernel may hold a few more than the line (those awaiting their
  // notification's read); beyond that it drops.
  auto opened = NfQueue::Open(
      o.queue, static_cast<uint32_t>(o.max_packets + 1024), [&](uint32_t id) {
        if (!line.Admit(id, Clock::now())) (void)queue->Drop(id);
      });
  if (!opened.ok()) {
    std::cerr << "netdelay: " << opened.status().message() << "\n";
    return 1;
  }
  queue = std::move(*opened);
  if (!o.ready_file.empty() && !(std::ofstream(o.ready_file) << "ready\n")) {
    std::cerr << "netdelay: cannot write " << o.ready_file << "\n";
    return 1;
  }
  const absl::Status s = Run(*queue, line, stop_fd);
  PrintCounters(o, line, *queue);
  if (!s.ok()) {
    std::cerr << "netdelay: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace ringleader

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Holds the packets of an NFQUEUE for a fixed delay, then accepts them "
      "in order (a user-space netem delay for emulated links).");
  const std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  const auto options = ringleader::MakeNetdelayOptions(
      absl::GetFlag(FLAGS_queue), absl::GetFlag(FLAGS_delay_ms),
      absl::GetFlag(FLAGS_max_packets), absl::GetFlag(FLAGS_ready_file),
      std::vector<std::string>(rest.begin(), rest.end()));
  if (!options.ok()) {
    std::cerr << "netdelay: " << options.status().message() << "\n";
    return 2;
  }
  return ringleader::Main(*options);
}
