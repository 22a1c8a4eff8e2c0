#ifndef RINGLEADER_WORKER_DATA_PNG_DECODER_H_
#define RINGLEADER_WORKER_DATA_PNG_DECODER_H_

// PNG decoding with libspng (Debian's libspng-dev) to 8-bit RGB, the pixels
// PIL's Image.open(f).convert("RGB") gives for 8-bit files: palette
// expanded, grayscale replicated, alpha (and tRNS transparency) dropped, no
// gamma applied. 16-bit samples keep their high byte (PIL's too for RGB;
// PIL clips 16-bit grayscale instead). Untrusted bytes: a bad signature,
// chunk, CRC or zlib stream, or a file cut short, is DataLoss; an image
// above `max_pixels` is refused before its pixels are allocated.

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "worker/data/rgb_image.h"

namespace ringleader {

absl::Status DecodePng(const uint8_t* data, size_t size, RgbImage* out,
                       int64_t max_pixels = int64_t{1} << 28);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_PNG_DECODER_H_
