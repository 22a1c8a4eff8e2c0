#include "worker/device/device.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ringleader {

absl::StatusOr<Device> ParseDevice(absl::string_view device) {
  if (device == "cpu") return Device{};
  absl::string_view ordinal = device;
  int index = -1;
  if (absl::ConsumePrefix(&ordinal, "cuda:") &&
      absl::SimpleAtoi(ordinal, &index) && index >= 0 && index < 1024) {
    return Device{true, index};
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "device \"", device, "\" is neither cpu nor cuda:N (N a GPU index)"));
}

}  // namespace ringleader
