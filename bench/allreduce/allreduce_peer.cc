// ringleader-allreduce-peer: one rank of the all-reduce benchmark. A real
// worker client (registers, takes the benchmark job, joins its rendezvous)
// builds the generation's communicator through the same factory the worker
// daemon uses (shared memory or Gloo, --transport; NCCL with --device=cuda:N),
// then times in-place float32 sum all-reduces of each size (each returns once
// the result is in the buffer, on the GPU too). Rank 0 prints one JSON object
// per size (nccl-tests' definitions: algbw = bytes / time, busbw = algbw * 2 (n
// - 1) / n).
//
// --buckets=N times what the DDP Reducer does in a step instead: N
// all-reduces of the size on N buffers issued back to back, then waited for
// (median_s is then the whole step's, algbw counts its N * bytes), with
// --buckets_in_flight Gloo lanes (bench/allreduce/inflight_bench.sh).
#include <torch/cuda.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/common/bench_client.h"
#include "grpcpp/grpcpp.h"
#include "worker/coordinator_client.h"
#include "worker/device/communicator_factory.h"
#include "worker/device/device.h"

ABSL_FLAG(std::string, coordinator, "", "Coordinator HOST:PORT.");
ABSL_FLAG(std::string, device, "cpu",
          "cpu, or cuda:N: the buffer lives on that GPU and the worker's "
          "factory gives the NCCL communicator (needs a CUDA LibTorch build, "
          "RINGLEADER_LIBTORCH).");
ABSL_FLAG(std::string, transport, "shm",
          "shm (shared memory) or gloo (TCP): the job's ddp.cpu_transport.");
ABSL_FLAG(std::string, sizes,
          "1024,4096,16384,65536,262144,1048576,4194304,"
          "16777216,67108864,268435456",
          "Message sizes in bytes, comma-separated.");
ABSL_FLAG(double, seconds_per_size, 1.0,
          "Timed iterations per size stop after about this long.");
ABSL_FLAG(int, max_iters, 200, "At most this many timed iterations per size.");
ABSL_FLAG(int, min_iters, 5, "At least this many timed iterations per size.");
ABSL_FLAG(int, buckets, 1,
          "All-reduces per timed step, issued together then waited for (the "
          "Reducer's buckets); 1: one blocking all-reduce.");
ABSL_FLAG(
    int, buckets_in_flight, 1,
    "Gloo lanes (DdpSpec.buckets_in_flight); other transports ignore it.");
ABSL_FLAG(std::string, address, "127.0.0.1",
          "Address Gloo binds and publishes (the worker's --address).");

namespace ringleader {
namespace {

int Run() {
  // A device this build cannot use fails here, before joining a job.
  const std::string device_name = absl::GetFlag(FLAGS_device);
  absl::StatusOr<Device> device = ParseDevice(device_name);
  if (!device.ok()) {
    std::cerr << device.status() << "\n";
    return 2;
  }
  if (absl::Status s = CheckDevice(device_name); !s.ok()) {
    std::cerr << s << "\n";
    return 2;
  }
  const torch::Device torch_device =
      device->cuda ? torch::Device(torch::kCUDA,
                                   static_cast<c10::DeviceIndex>(device->index))
                   : torch::Device(torch::kCPU);
  absl::StatusOr<bench::JoinedJob> joined =
      bench::JoinFirstJob(absl::GetFlag(FLAGS_coordinator), "allreduce-bench",
                          absl::Seconds(60), absl::Seconds(30));
  if (!joined.ok()) {
    std::cerr << joined.status() << "\n";
    return 1;
  }
  CoordinatorClient& client = *joined->client;
  const v1::JobAssignment* job = &joined->job;
  const v1::JoinRendezvousResponse* gen = &joined->generation;
  CommunicatorRequest request;
  request.client = &client;
  request.job_id = job->job_id();
  request.generation = gen->generation();
  request.rank = gen->rank();
  request.world_size = gen->world_size();
  request.timeout = absl::Seconds(120);
  request.address = absl::GetFlag(FLAGS_address);
  request.buckets_in_flight = absl::GetFlag(FLAGS_buckets_in_flight);
  const int buckets = absl::GetFlag(FLAGS_buckets);
  if (buckets < 1 || request.buckets_in_flight < 1) {
    std::cerr << "--buckets and --buckets_in_flight must be at least 1\n";
    return 2;
  }
  const std::string transport = absl::GetFlag(FLAGS_transport);
  if (transport != "shm" && transport != "gloo") {
    std::cerr << "--transport must be shm or gloo\n";
    return 2;
  }
  request.cpu_transport =
      transport == "shm" ? v1::CPU_TRANSPORT_SHM : v1::CPU_TRANSPORT_GLOO;
  request.device = *device;
  // What the figures are labelled with: on a GPU the factory gives NCCL
  // whatever the CPU transport says.
  const std::string impl = device->cuda ? "nccl" : transport;
  absl::StatusOr<std::unique_ptr<Communicator>> comm =
      CreateCommunicator(request);
  if (!comm.ok()) {
    std::cerr << comm.status() << "\n";
    return 1;
  }
  const int world = gen->world_size();
  for (absl::string_view size_text :
       absl::StrSplit(absl::GetFlag(FLAGS_sizes), ',')) {
    int64_t bytes = 0;
    if (!absl::SimpleAtoi(size_text, &bytes) || bytes < 4) {
      std::cerr << "bad size " << size_text << "\n";
      return 2;
    }
    const size_t count = static_cast<size_t>(bytes / 4);
    // On the worker's device, as the reducer's buckets are.
    std::vector<torch::Tensor> tensors;
    for (int b = 0; b < buckets; ++b) {
      tensors.push_back(torch::ones(
          {static_cast<int64_t>(count)},
          torch::TensorOptions().dtype(torch::kFloat32).device(torch_device)));
    }
    // One timed step: every bucket issued, then every one waited for.
    auto step = [&]() -> absl::Status {
      std::vector<std::unique_ptr<Work>> works;
      for (torch::Tensor& t : tensors) {
        works.push_back((*comm)->AllReduceSumAsync(t.data_ptr<float>(), count,
                                                   DataType::kFloat32));
      }
      absl::Status first;
      for (auto& w : works) first.Update(w->Wait());
      // NCCL's Wait only orders the device's stream: the step ends when
      // the device has run it.
      if (device->cuda) torch::cuda::synchronize();
      return first;
    };
    // Warm-up (connections, caches), and every rank agrees on the number of
    // timed iterations: rank 0's estimate, broadcast.
    absl::Time t0 = absl::Now();
    for (int i = 0; i < 2; ++i) {
      if (absl::Status s = step(); !s.ok()) {
        std::cerr << s << "\n";
        return 1;
      }
    }
    const double warm = absl::ToDoubleSeconds(absl::Now() - t0) / 2;
    int64_t iters = std::clamp<int64_t>(
        static_cast<int64_t>(absl::GetFlag(FLAGS_seconds_per_size) /
                             std::max(warm, 1e-6)),
        absl::GetFlag(FLAGS_min_iters), absl::GetFlag(FLAGS_max_iters));
    // Through a tensor on the worker's device: NCCL broadcasts device
    // memory only (a host address faults its kernel).
    torch::Tensor agreed =
        torch::tensor({iters}, torch::kInt64).to(torch_device);
    if (absl::Status s =
            (*comm)->Broadcast(agreed.data_ptr(), sizeof(int64_t), 0);
        !s.ok()) {
      std::cerr << s << "\n";
      return 1;
    }
    iters = agreed.cpu().item<int64_t>();
    std::vector<double> times;
    for (int64_t i = 0; i < iters; ++i) {
      const absl::Time start = absl::Now();
      if (absl::Status s = step(); !s.ok()) {
        std::cerr << s << "\n";
        return 1;
      }
      times.push_back(absl::ToDoubleSeconds(absl::Now() - start));
    }
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2];
    const double algbw = static_cast<double>(bytes) * buckets / median / 1e9;
    if (gen->rank() == 0) {
      std::printf(
          "{\"impl\": \"ringleader-%s\", \"world\": %d, \"bytes\": %lld, "
          "\"buckets\": %d, \"buckets_in_flight\": %d, "
          "\"iters\": %lld, \"median_s\": %.9f, \"algbw_gbps\": %.6f, "
          "\"busbw_gbps\": %.6f}\n",
          impl.c_str(), world, static_cast<long long>(bytes), buckets,
          request.buckets_in_flight, static_cast<long long>(iters), median,
          algbw, algbw * 2.0 * (world - 1) / world);
      std::fflush(stdout);
    }
  }
  client.StopHeartbeats();
  client.Leave("benchmark done").IgnoreError();
  return 0;
}

}  // namespace
}  // namespace ringleader

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return ringleader::Run();
}
