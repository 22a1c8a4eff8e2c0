#ifndef RINGLEADER_WORKER_DATA_RGB_IMAGE_H_
#define RINGLEADER_WORKER_DATA_RGB_IMAGE_H_

// Decoded pixels as the image decoders hand them on: 8-bit RGB, interleaved,
// row-major (what libjpeg and libspng write, and PIL's "RGB" mode). A
// decoder may decode only a band of rows (the ones a crop needs): `width`
// and `height` are then the whole image's, and `pixels` holds rows
// [row_begin, row_begin + rows).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ringleader {

struct RgbImage {
  int width = 0;
  int height = 0;
  int row_begin = 0;
  int rows = 0;
  std::vector<uint8_t> pixels;  // rows * width * 3 bytes.

  // Row y of the whole image; y must be in [row_begin, row_begin + rows).
  const uint8_t* Row(int y) const {
    return pixels.data() + static_cast<size_t>(y - row_begin) * width * 3;
  }
  uint8_t* MutableRow(int y) {
    return pixels.data() + static_cast<size_t>(y - row_begin) * width * 3;
  }
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_RGB_IMAGE_H_
