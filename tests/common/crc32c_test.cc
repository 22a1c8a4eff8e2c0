#include "common/crc32c.h"

#include <string>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

// The check value of CRC-32C (Castagnoli) from the CRC catalogue, and the
// iSCSI test vectors of RFC 3720, B.4.
TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);
}

TEST(Crc32cTest, MaskIsTensorFlowsRotationPlusConstant) {
  // ((c >> 15) | (c << 17)) + 0xa282ead8, modulo 2^32.
  EXPECT_EQ(MaskCrc32c(0), 0xa282ead8u);
  EXPECT_EQ(MaskCrc32c(0x00008000u), 0xa282ead9u);
  EXPECT_EQ(MaskCrc32c(0xE3069283u),
            static_cast<uint32_t>(((0xE3069283u >> 15) | (0xE3069283u << 17)) +
                                  0xa282ead8u));
}

}  // namespace
}  // namespace ringleader
