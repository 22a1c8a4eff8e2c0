#ifndef RINGLEADER_WORKER_DEVICE_COMMUNICATOR_FACTORY_H_
#define RINGLEADER_WORKER_DEVICE_COMMUNICATOR_FACTORY_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"
#include "worker/device/device.h"

namespace ringleader {

// OK when this build and host can train on `device` ("cpu" or "cuda:N");
// otherwise why not. The daemon checks once at startup, so a bad --device
// fails there and not in the middle of a job.
absl::Status CheckDevice(const std::string& device);

// OK when `device` computes in bfloat16 (bf16 mixed precision): every CPU
// (natively with AVX-512 BF16 or AMX, else emulated), CUDA GPUs of compute
// capability 8.0 or later.
absl::Status CheckBf16(const Device& device);

// The communicator of one generation for the worker's device: Gloo over TCP
// for the CPU (bootstrapped through the coordinator's KV store, with
// `request.buckets_in_flight` lanes), shared memory when the ranks share a
// host and the transport allows, NCCL on the GPU (its unique id through the
// coordinator; one stream, whatever buckets_in_flight says).
absl::StatusOr<std::unique_ptr<Communicator>> CreateCommunicator(
    const CommunicatorRequest& request);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DEVICE_COMMUNICATOR_FACTORY_H_
