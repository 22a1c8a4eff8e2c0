#ifndef RINGLEADER_COMMON_CRC32C_H_
#define RINGLEADER_COMMON_CRC32C_H_

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of
// TFRecord and tfevents files, and TensorFlow's masking of it. The system
// abseil predates absl/crc, so this is a small table-driven one (a byte at
// a time: event files are written a few hundred bytes per report).
// Pure functions; thread-safe.

#include <cstdint>

#include "absl/strings/string_view.h"

namespace ringleader {

// CRC-32C of `data` ("123456789" gives 0xE3069283).
uint32_t Crc32c(absl::string_view data);

// TensorFlow's masked CRC (tensorflow/core/lib/hash/crc32c.h): rotated
// right by 15 bits plus 0xa282ead8, so a CRC of data holding CRCs stays
// meaningful.
inline uint32_t MaskCrc32c(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_CRC32C_H_
