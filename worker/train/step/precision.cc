#include "worker/train/step/precision.h"

#include "worker/device/communicator_factory.h"

namespace ringleader {

absl::Status ApplyPrecision(const v1::JobSpec& spec, const c10::Device& device,
                            Model& model) {
  if (spec.precision() != v1::PRECISION_BF16_MIXED) return absl::OkStatus();
  const Device d{device.is_cuda(), device.is_cuda() ? device.index() : 0};
  if (absl::Status s = CheckBf16(d); !s.ok()) return s;
  model.SetBf16Autocast(true);
  return absl::OkStatus();
}

}  // namespace ringleader
