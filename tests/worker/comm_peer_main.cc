// One simulated worker for the multi-process communicator tests: registers
// with a real coordinator, joins the job's rendezvous, builds the
// communicator named by --transport (GlooCommunicator, with --lanes, or
// ShmCommunicator) through GrpcKvClient and checks collectives with exact
// expected results. Exits 0 when every check passed; prints what failed
// otherwise.
//
//   --mode=collectives  all-reduce (float32/float64/int64, several sizes),
//                       broadcast from root 1, back-to-back async ops, a
//                       second communicator of the same generation, and
//                       optionally a timed 4 MiB all-reduce (--bench_iters).
//   --mode=abort        (world 2) rank 0 starts an all-reduce rank 1 never
//                       joins; rank 1 leaves the job (ending the generation)
//                       and then blocks on stdin, keeping its sockets open.
//                       Rank 0 learns from the coordinator that the generation
//                       ended, calls Abort() from another thread, and checks
//                       the pending work fails within a few seconds.
//   --mode=peer_exits   (world 2) rank 0 starts an all-reduce; rank 1 exits
//                       without joining it. Rank 0's work must fail on its
//                       own (no Abort(), a 120 s timeout) within 2 s.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/grpc_status.h"
#include "common/worker_credential.h"
#include "grpcpp/grpcpp.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "worker/comm/gloo_communicator.h"
#include "worker/comm/grpc_kv_client.h"
#include "worker/comm/shm_communicator.h"

ABSL_FLAG(std::string, coordinator, "", "host:port of the coordinator");
ABSL_FLAG(int, pid_tag, 0, "index of this peer, for messages");
ABSL_FLAG(std::string, mode, "collectives", "collectives | abort | peer_exits");
ABSL_FLAG(std::string, transport, "gloo", "gloo | shm");
ABSL_FLAG(int, shm_slot_bytes, 1 << 20, "ShmCommunicator slot size");
ABSL_FLAG(int, bench_iters, 0, "timed 4 MiB float32 all-reduces to run");
ABSL_FLAG(int, timeout_s, 30, "communicator timeout");
ABSL_FLAG(int, lanes, 1, "Gloo lanes (DdpSpec.buckets_in_flight)");

namespace ringleader {
namespace {

std::string Tag() {
  return absl::StrCat("[peer ", absl::GetFlag(FLAGS_pid_tag), "] ");
}

#define CHECK_OK_OR_RETURN(expr)                                           \
  do {                                                                     \
    absl::Status _s = (expr);                                              \
    if (!_s.ok()) {                                                        \
      return absl::Status(                                                 \
          _s.code(),                                                       \
          absl::StrCat(#expr, " at line ", __LINE__, ": ", _s.message())); \
    }                                                                      \
  } while (false)

// A call's context; after Register it carries this peer's credential, as
// every later WorkerService call must.
std::unique_ptr<grpc::ClientContext> Ctx(
    absl::Duration d, const WorkerCredential& worker = WorkerCredential()) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(d));
  AttachWorkerCredential(ctx.get(), worker);
  return ctx;
}

struct Joined {
  std::string worker_id;
  WorkerCredential credential;
  std::string job_id;
  v1::JoinRendezvousResponse gen;
};

absl::StatusOr<Joined> RegisterAndJoin(v1::WorkerService::Stub* stub) {
  Joined out;
  v1::RegisterRequest reg;
  reg.set_hostname("gloo-peer");
  reg.set_pid(getpid());
  reg.set_device("cpu");
  reg.set_address("127.0.0.1");
  v1::RegisterResponse rr;
  CHECK_OK_OR_RETURN(FromGrpcStatus(
      stub->Register(Ctx(absl::Seconds(10)).get(), reg, &rr), "Register"));
  out.worker_id = rr.worker_id();
  out.credential = {rr.worker_id(), rr.worker_token()};
  // The job was submitted before this process started: the first heartbeat
  // carries the assignment.
  v1::HeartbeatRequest hb;
  hb.set_worker_id(out.worker_id);
  v1::HeartbeatResponse hr;
  CHECK_OK_OR_RETURN(FromGrpcStatus(
      stub->Heartbeat(Ctx(absl::Seconds(10), out.credential).get(), hb, &hr),
      "Heartbeat"));
  if (!hr.has_assignment()) {
    return absl::FailedPreconditionError("first heartbeat had no assignment");
  }
  out.job_id = hr.assignment().job_id();
  v1::JoinRendezvousRequest jr;
  jr.set_job_id(out.job_id);
  jr.set_worker_id(out.worker_id);
  jr.set_timeout_ms(30000);
  CHECK_OK_OR_RETURN(FromGrpcStatus(
      stub->JoinRendezvous(Ctx(absl::Seconds(40), out.credential).get(), jr,
                           &out.gen),
      "JoinRendezvous"));
  return out;
}

absl::Status Mismatch(const char* what, size_t i, double got, double want) {
  return absl::InternalError(
      absl::StrCat(what, "[", i, "] = ", got, ", expected ", want));
}

// Rank-dependent contents whose sums are exact in each type.
absl::Status CheckFloat32(Communicator* comm, size_t n) {
  const int r = comm->rank(), w = comm->world_size();
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = float(r + 1) + float(i % 1000);
  CHECK_OK_OR_RETURN(comm->AllReduceSum(x.data(), n, DataType::kFloat32));
  for (size_t i = 0; i < n; ++i) {
    const float want = float(w * (w + 1) / 2) + float(w) * float(i % 1000);
    if (x[i] != want) return Mismatch("float32", i, x[i], want);
  }
  return absl::OkStatus();
}

absl::Status CheckFloat64(Communicator* comm, size_t n) {
  const int r = comm->rank(), w = comm->world_size();
  std::vector<double> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = 0.5 * (r + 1) + double(i);
  CHECK_OK_OR_RETURN(comm->AllReduceSum(x.data(), n, DataType::kFloat64));
  for (size_t i = 0; i < n; ++i) {
    const double want = 0.5 * (w * (w + 1) / 2) + double(w) * double(i);
    if (x[i] != want) return Mismatch("float64", i, x[i], want);
  }
  return absl::OkStatus();
}

absl::Status CheckInt64(Communicator* comm, size_t n) {
  const int64_t r = comm->rank(), w = comm->world_size();
  constexpr int64_t kBig = 1'000'000'000'000;  // Beyond 32 bits.
  std::vector<int64_t> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = (r + 1) * kBig + int64_t(i);
  CHECK_OK_OR_RETURN(comm->AllReduceSum(x.data(), n, DataType::kInt64));
  for (size_t i = 0; i < n; ++i) {
    const int64_t want = kBig * (w * (w + 1) / 2) + w * int64_t(i);
    if (x[i] != want) return Mismatch("int64", i, double(x[i]), double(want));
  }
  return absl::OkStatus();
}

absl::Status CheckBroadcast(Communicator* comm, int root, size_t bytes) {
  std::vector<uint8_t> x(bytes, 0);
  auto pattern = [](size_t i) { return uint8_t((i * 31 + 7) & 0xff); };
  if (comm->rank() == root) {
    for (size_t i = 0; i < bytes; ++i) x[i] = pattern(i);
  }
  CHECK_OK_OR_RETURN(comm->Broadcast(x.data(), bytes, root));
  for (size_t i = 0; i < bytes; ++i) {
    if (x[i] != pattern(i)) return Mismatch("broadcast", i, x[i], pattern(i));
  }
  return absl::OkStatus();
}

// Issued back to back, waited in order: each matches its peers' (with lanes,
// on the lane its sequence number picks) whatever order they complete in.
absl::Status CheckAsyncBackToBack(Communicator* comm) {
  const int r = comm->rank(), w = comm->world_size();
  constexpr int kOps = 8;
  std::vector<std::vector<float>> bufs(kOps);
  std::vector<std::unique_ptr<Work>> works;
  for (int k = 0; k < kOps; ++k) {
    bufs[k].assign(size_t(k) * 1000 + 1, float((r + 1) * (k + 1)));
    works.push_back(comm->AllReduceSumAsync(bufs[k].data(), bufs[k].size(),
                                            DataType::kFloat32));
  }
  for (int k = 0; k < kOps; ++k) {
    CHECK_OK_OR_RETURN(works[k]->Wait());
    const float want = float((k + 1) * w * (w + 1) / 2);
    for (size_t i = 0; i < bufs[k].size(); ++i) {
      if (bufs[k][i] != want) return Mismatch("async", i, bufs[k][i], want);
    }
  }
  return absl::OkStatus();
}

absl::Status Bench(Communicator* comm, int iters) {
  constexpr size_t kFloats = 1 << 20;  // 4 MiB.
  std::vector<float> x(kFloats, 1.0f);
  for (int i = 0; i < 3; ++i) {
    CHECK_OK_OR_RETURN(
        comm->AllReduceSum(x.data(), kFloats, DataType::kFloat32));
  }
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) {
    const absl::Time start = absl::Now();
    CHECK_OK_OR_RETURN(
        comm->AllReduceSum(x.data(), kFloats, DataType::kFloat32));
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
  }
  std::sort(ms.begin(), ms.end());
  const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / ms.size();
  std::printf(
      "%srank %d of %d: 4 MiB float32 all-reduce over %d runs: median %.2f "
      "ms, min %.2f ms, mean %.2f ms\n",
      Tag().c_str(), comm->rank(), comm->world_size(), iters, ms[ms.size() / 2],
      ms.front(), mean);
  return absl::OkStatus();
}

// The communicator --transport names.
absl::StatusOr<std::unique_ptr<Communicator>> MakeComm(KvClient* kv,
                                                       const Joined& j,
                                                       absl::Duration timeout,
                                                       int comm_index) {
  const std::string transport = absl::GetFlag(FLAGS_transport);
  if (transport == "shm") {
    absl::StatusOr<bool> shared = AllRanksShareMemory(
        kv, j.gen.rank(), j.gen.world_size(), timeout, comm_index);
    CHECK_OK_OR_RETURN(shared.status());
    if (!*shared) return absl::InternalError("peers do not share memory");
    ShmCommunicator::Options options;
    options.timeout = timeout;
    options.comm_index = comm_index;
    options.slot_bytes = absl::GetFlag(FLAGS_shm_slot_bytes);
    auto comm =
        ShmCommunicator::Create(kv, j.gen.rank(), j.gen.world_size(), options);
    CHECK_OK_OR_RETURN(comm.status());
    return std::unique_ptr<Communicator>(*std::move(comm));
  }
  if (transport != "gloo") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --transport=", transport));
  }
  GlooCommunicator::Options options;
  options.timeout = timeout;
  options.comm_index = comm_index;
  options.lanes = absl::GetFlag(FLAGS_lanes);
  auto comm =
      GlooCommunicator::Create(kv, j.gen.rank(), j.gen.world_size(), options);
  CHECK_OK_OR_RETURN(comm.status());
  return std::unique_ptr<Communicator>(*std::move(comm));
}

absl::Status RunCollectives(KvClient* kv, const Joined& j) {
  const absl::Duration timeout = absl::Seconds(absl::GetFlag(FLAGS_timeout_s));
  auto comm = MakeComm(kv, j, timeout, 0);
  CHECK_OK_OR_RETURN(comm.status());
  Communicator* c = comm->get();
  for (size_t n : {size_t(1), size_t(1000), size_t(1) << 20}) {
    CHECK_OK_OR_RETURN(CheckFloat32(c, n));
  }
  CHECK_OK_OR_RETURN(CheckFloat64(c, 1000));
  CHECK_OK_OR_RETURN(CheckFloat64(c, size_t(1) << 17));
  CHECK_OK_OR_RETURN(CheckInt64(c, 1000));
  CHECK_OK_OR_RETURN(CheckInt64(c, size_t(1) << 17));
  CHECK_OK_OR_RETURN(CheckBroadcast(c, /*root=*/1, 100003));
  CHECK_OK_OR_RETURN(CheckAsyncBackToBack(c));
  // A second communicator of the same generation bootstraps under its own
  // keys while the first stays usable.
  auto second = MakeComm(kv, j, timeout, 1);
  CHECK_OK_OR_RETURN(second.status());
  CHECK_OK_OR_RETURN(CheckFloat32(second->get(), 1000));
  CHECK_OK_OR_RETURN(CheckFloat32(c, 1000));
  if (absl::GetFlag(FLAGS_bench_iters) > 0) {
    CHECK_OK_OR_RETURN(Bench(c, absl::GetFlag(FLAGS_bench_iters)));
  }
  return absl::OkStatus();
}

absl::Status RunAbort(v1::WorkerService::Stub* stub, GrpcKvClient* kv,
                      const Joined& j) {
  if (j.gen.world_size() != 2) {
    return absl::InvalidArgumentError("abort mode wants 2 peers");
  }
  // Far beyond the parent's bound: only Abort() can end the op in time.
  auto comm = MakeComm(kv, j, absl::Seconds(120), 0);
  CHECK_OK_OR_RETURN(comm.status());
  Communicator* c = comm->get();
  CHECK_OK_OR_RETURN(CheckFloat32(c, 1000));  // The mesh works.

  if (j.gen.rank() == 1) {
    CHECK_OK_OR_RETURN(kv->Wait({"test/issued"}, absl::Seconds(30)).status());
    v1::LeaveRequest leave;
    leave.set_worker_id(j.worker_id);
    leave.set_reason("abort test: rank 1 stops");
    v1::LeaveResponse lr;
    CHECK_OK_OR_RETURN(FromGrpcStatus(
        stub->Leave(Ctx(absl::Seconds(10), j.credential).get(), leave, &lr),
        "Leave"));
    // Stay alive with the sockets open until the parent closes stdin, so
    // rank 0 cannot learn of the failure from a closed connection.
    char byte;
    while (read(0, &byte, 1) > 0) {
    }
    return absl::OkStatus();
  }

  std::vector<float> x(1 << 20, 1.0f);
  std::unique_ptr<Work> pending =
      c->AllReduceSumAsync(x.data(), x.size(), DataType::kFloat32);
  CHECK_OK_OR_RETURN(kv->Set("test/issued", "1"));
  absl::Status watch;
  absl::Time aborted_at;
  // The daemon's shape: something else learns that the generation ended and
  // aborts the communicator while the training thread waits on its work.
  std::thread watcher([&] {
    watch = kv->Wait({"test/never-set"}, absl::Seconds(50)).status();
    aborted_at = absl::Now();
    c->Abort();
  });
  absl::Status result = pending->Wait();
  const absl::Time returned_at = absl::Now();
  watcher.join();
  if (!absl::IsAborted(watch)) {
    return absl::InternalError(
        absl::StrCat("expected the generation to end, got ", watch.ToString()));
  }
  if (!absl::IsAborted(result)) {
    return absl::InternalError(absl::StrCat(
        "pending all-reduce: expected ABORTED, got ", result.ToString()));
  }
  const absl::Duration took = returned_at - aborted_at;
  std::printf("%spending all-reduce returned %s %.1f ms after Abort()\n",
              Tag().c_str(), result.ToString().c_str(),
              absl::ToDoubleMilliseconds(took));
  if (took > absl::Seconds(5)) {
    return absl::InternalError("pending work took over 5 s after Abort()");
  }
  absl::Status later = c->AllReduceSum(x.data(), x.size(), DataType::kFloat32);
  if (!absl::IsAborted(later)) {
    return absl::InternalError(
        absl::StrCat("work after Abort(): ", later.ToString()));
  }
  return absl::OkStatus();
}

absl::Status RunPeerExits(GrpcKvClient* kv, const Joined& j) {
  if (j.gen.world_size() != 2) {
    return absl::InvalidArgumentError("peer_exits mode wants 2 peers");
  }
  // Far beyond the bound checked below: the failure must be seen directly.
  auto comm = MakeComm(kv, j, absl::Seconds(120), 0);
  CHECK_OK_OR_RETURN(comm.status());
  Communicator* c = comm->get();
  CHECK_OK_OR_RETURN(CheckFloat32(c, 1000));
  if (j.gen.rank() == 1) {
    CHECK_OK_OR_RETURN(kv->Wait({"test/issued"}, absl::Seconds(30)).status());
    std::printf("%srank 1 exits without joining\n", Tag().c_str());
    std::fflush(stdout);
    _exit(0);  // No destructors: as if killed.
  }
  std::vector<float> x(1 << 20, 1.0f);
  std::unique_ptr<Work> pending =
      c->AllReduceSumAsync(x.data(), x.size(), DataType::kFloat32);
  CHECK_OK_OR_RETURN(kv->Set("test/issued", "1"));
  const absl::Time issued = absl::Now();
  absl::Status result = pending->Wait();
  const absl::Duration took = absl::Now() - issued;
  std::printf(
      "%spending all-reduce returned %s %.1f ms after the peer was "
      "told to exit\n",
      Tag().c_str(), result.ToString().c_str(),
      absl::ToDoubleMilliseconds(took));
  if (result.ok()) return absl::InternalError("all-reduce without a peer");
  if (took > absl::Seconds(2)) {
    return absl::InternalError("the peer's exit took over 2 s to be seen");
  }
  return absl::OkStatus();
}

int Main() {
  auto channel = grpc::CreateChannel(absl::GetFlag(FLAGS_coordinator),
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::WorkerService::NewStub(channel);
  absl::StatusOr<Joined> j = RegisterAndJoin(stub.get());
  absl::Status s = j.status();
  if (s.ok()) {
    GrpcKvClient kv(channel, j->job_id, j->gen.generation(), j->credential);
    const std::string mode = absl::GetFlag(FLAGS_mode);
    if (mode == "collectives") {
      s = RunCollectives(&kv, *j);
    } else if (mode == "abort") {
      s = RunAbort(stub.get(), &kv, *j);
    } else if (mode == "peer_exits") {
      s = RunPeerExits(&kv, *j);
    } else {
      s = absl::InvalidArgumentError(absl::StrCat("unknown --mode=", mode));
    }
  }
  if (!s.ok()) {
    std::fprintf(stderr, "%sFAILED: %s\n", Tag().c_str(), s.ToString().c_str());
    return 1;
  }
  std::printf("%srank %d of %d: OK\n", Tag().c_str(), j->gen.rank(),
              j->gen.world_size());
  std::fflush(stdout);
  return 0;
}

}  // namespace
}  // namespace ringleader

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return ringleader::Main();
}
