#include "worker/device/communicator_factory.h"

#include "worker/comm/gloo_communicator.h"
#include "worker/comm/grpc_kv_client.h"
#include "worker/device/cuda_backend.h"

namespace ringleader {

absl::Status CheckDevice(const std::string& device) {
  absl::StatusOr<Device> d = ParseDevice(device);
  if (!d.ok()) return d.status();
  return d->cuda ? CheckCudaDevice(d->index) : absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Communicator>> CreateCommunicator(
    const CommunicatorRequest& request) {
  if (request.client == nullptr) {
    return absl::InvalidArgumentError("no coordinator client");
  }
  if (request.device.cuda) return CreateCudaCommunicator(request);
  // The KV store is only used while the mesh connects.
  GrpcKvClient kv(request.client->channel(), request.job_id,
                  request.generation);
  GlooCommunicator::Options options;
  options.interface_or_host = request.address;
  options.timeout = request.timeout;
  absl::StatusOr<std::unique_ptr<GlooCommunicator>> comm =
      GlooCommunicator::Create(&kv, request.rank, request.world_size, options);
  if (!comm.ok()) return comm.status();
  return std::unique_ptr<Communicator>(std::move(*comm));
}

}  // namespace ringleader
