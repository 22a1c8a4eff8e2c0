#ifndef RINGLEADER_BENCH_CONTROL_PLANE_CLIENTS_H_
#define RINGLEADER_BENCH_CONTROL_PLANE_CLIENTS_H_

// The simulated workers of control_plane_bench: state machines on gRPC's
// callback API (no thread per worker), so that one process drives up to
// 1024 of them over a few connections. Each registers, heartbeats, takes
// its job from a heartbeat, joins the rendezvous and passes barrier rounds
// over one of three protocols, recording its timestamps.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace ringleader::bench {

// Wall-clock microseconds (shared by the processes of one machine).
inline int64_t NowUs() { return absl::GetCurrentTimeNanos() / 1000; }

inline void SetDeadline(grpc::ClientContext& ctx, absl::Duration d) {
  ctx.set_deadline(std::chrono::system_clock::now() +
                   absl::ToChronoMilliseconds(d));
}

// How the workers arrive at barriers.
enum class BarrierProtocol {
  kUnary,   // One WorkerService.Barrier call per arrival.
  kStream,  // One BarrierStream per worker.
  kShared,  // One BarrierStream per connection, carrying all its workers.
};

// "unary", "stream" or "shared"; nullopt for anything else.
std::optional<BarrierProtocol> ParseBarrierProtocol(absl::string_view name);

struct ClientsConfig {
  std::string coordinator;  // HOST:PORT.
  int workers = 0;          // In this process.
  int first_index = 0;      // Of this process's first worker.
  int rounds = 0;           // Barrier rounds.
  int channels = 4;         // Connections.
  BarrierProtocol protocol = BarrierProtocol::kStream;
  int64_t heartbeat_ms = 1000;
  int64_t start_at_us = 0;  // Wall clock (NowUs) to begin at.
};

// Runs the workers until each passed every round (or failed) and left, then
// writes one line per worker to `out`: "w index reg_sent reg_done join_sent
// join_done rank generation bar_sent,... bar_done,... ok|ERR", and an
// "e index message" line per failed worker.
void RunClients(const ClientsConfig& config, const std::string& out);

}  // namespace ringleader::bench

#endif  // RINGLEADER_BENCH_CONTROL_PLANE_CLIENTS_H_
