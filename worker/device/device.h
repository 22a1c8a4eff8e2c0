#ifndef RINGLEADER_WORKER_DEVICE_DEVICE_H_
#define RINGLEADER_WORKER_DEVICE_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ringleader/v1/job.pb.h"
#include "worker/coordinator_client.h"

namespace ringleader {

// A worker's --device: "cpu" or "cuda:N".
struct Device {
  bool cuda = false;
  int index = 0;  // The CUDA device ordinal; 0 for the CPU.
};

// INVALID_ARGUMENT naming the accepted forms for anything else.
absl::StatusOr<Device> ParseDevice(absl::string_view device);

// What creating a generation's communicator needs.
struct CommunicatorRequest {
  CoordinatorClient* client = nullptr;  // Bootstraps through the coordinator.
  std::string job_id;
  int64_t generation = 0;
  int32_t rank = 0;
  int32_t world_size = 1;
  Device device;
  // CPU only: shared memory, Gloo, or shared memory where all ranks can.
  v1::CpuTransport cpu_transport = v1::CPU_TRANSPORT_AUTO;
  // The address or interface Gloo binds and publishes to its peers.
  std::string address = "127.0.0.1";
  // Bounds the bootstrap and every collective.
  absl::Duration timeout = absl::Seconds(60);
  // Gloo only: collectives in flight at once, one full mesh and thread each
  // (DdpSpec.buckets_in_flight, resolved: at least 1). Shared memory and NCCL
  // ignore it.
  int buckets_in_flight = 1;
  // Turns true when the coordinator ended the generation: creation gives up.
  const std::atomic<bool>* cancelled = nullptr;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DEVICE_DEVICE_H_
