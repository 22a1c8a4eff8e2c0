#include "worker/device/communicator_factory.h"

#include <sched.h>

#include "glog/logging.h"
#include "worker/comm/gloo_communicator.h"
#include "worker/comm/grpc_kv_client.h"
#include "worker/comm/shm_communicator.h"
#include "worker/device/cuda_backend.h"

namespace ringleader {
namespace {

// CPUs this process may run on.
int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  return CPU_COUNT(&set);
}

}  // namespace

absl::Status CheckDevice(const std::string& device) {
  absl::StatusOr<Device> d = ParseDevice(device);
  if (!d.ok()) return d.status();
  return d->cuda ? CheckCudaDevice(d->index) : absl::OkStatus();
}

absl::Status CheckBf16(const Device& device) {
  return device.cuda ? CheckCudaBf16(device.index) : absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Communicator>> CreateCommunicator(
    const CommunicatorRequest& request) {
  if (request.client == nullptr) {
    return absl::InvalidArgumentError("no coordinator client");
  }
  if (request.device.cuda) return CreateCudaCommunicator(request);
  // The KV store is only used while the mesh connects.
  GrpcKvClient kv(request.client->channel(), request.job_id, request.generation,
                  request.client->credential());
  bool shm = false;
  if (request.cpu_transport != v1::CPU_TRANSPORT_GLOO) {
    absl::StatusOr<bool> shared = AllRanksShareMemory(
        &kv, request.rank, request.world_size, request.timeout);
    if (!shared.ok()) return shared.status();
    if (!*shared && request.cpu_transport == v1::CPU_TRANSPORT_SHM) {
      return absl::FailedPreconditionError(
          "the job asks for the shared-memory transport (ddp.cpu_transport) "
          "but its ranks do not share one host's /dev/shm");
    }
    shm = *shared;
  }
  if (shm) {
    // Every rank is on this host. More ranks than CPUs train, but each step
    // goes at the pace of the ranks that share a core, and the kernel moves
    // a queued rank to a core that went idle only late (3 ranks on 2 cores:
    // 8-16% of the CPUs' time idle that way, bench/README.md).
    if (const int cpus = UsableCpus(); cpus > 0 && request.world_size > cpus) {
      LOG_IF(WARNING, request.rank == 0)
          << request.world_size << " ranks share a host with " << cpus
          << " usable CPUs: ranks that share a core set every step's pace "
             "(bench/README.md, training at 3 ranks on 2 cores); run at most "
          << cpus << " CPU workers here";
    }
    ShmCommunicator::Options options;
    options.timeout = request.timeout;
    absl::StatusOr<std::unique_ptr<ShmCommunicator>> comm =
        ShmCommunicator::Create(&kv, request.rank, request.world_size, options);
    if (!comm.ok()) return comm.status();
    LOG(INFO) << "collectives over shared memory";
    return std::unique_ptr<Communicator>(std::move(*comm));
  }
  GlooCommunicator::Options options;
  options.interface_or_host = request.address;
  options.timeout = request.timeout;
  options.lanes = request.buckets_in_flight;
  absl::StatusOr<std::unique_ptr<GlooCommunicator>> comm =
      GlooCommunicator::Create(&kv, request.rank, request.world_size, options);
  if (!comm.ok()) return comm.status();
  LOG(INFO) << "collectives over Gloo TCP from " << request.address << ", "
            << options.lanes << (options.lanes == 1 ? " lane" : " lanes")
            << " (buckets in flight)";
  return std::unique_ptr<Communicator>(std::move(*comm));
}

}  // namespace ringleader
