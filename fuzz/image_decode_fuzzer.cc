// Feeds arbitrary bytes to what decodes a user's image files
// (worker/data/jpeg_decoder.h, png_decoder.h, through image_transform.h, and
// the listing's end check in encoded_samples.h). Besides "no crash, no
// sanitizer report, no hang" (libjpeg's errors longjmp out of C frames;
// libspng's are codes), each input must keep these invariants:
//   - an error is DATA_LOSS (or RESOURCE_EXHAUSTED), one line;
//   - a decoded JPEG or PNG has the rows it says, of width x 3 bytes;
//   - the training and evaluation transforms either fail with DATA_LOSS or
//     write finite floats, the same ones when run twice (a pure function of
//     the bytes and the draw);
// Images are capped at 2^20 pixels so an input cannot allocate more than
// libFuzzer's memory limit.
#include "fuzz/image_decode_fuzzer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "worker/data/encoded_samples.h"
#include "worker/data/image_transform.h"
#include "worker/data/jpeg_decoder.h"
#include "worker/data/png_decoder.h"

namespace ringleader {
namespace {

#define FUZZ_CHECK(cond, detail)                                               \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr,                                                     \
                   "image_decode_fuzzer: invariant failed: %s\n  %s\n", #cond, \
                   std::string(detail).c_str());                               \
      std::abort();                                                            \
    }                                                                          \
  } while (0)

constexpr int64_t kMaxPixels = int64_t{1} << 20;

void CheckError(const absl::Status& s) {
  FUZZ_CHECK(s.code() == absl::StatusCode::kDataLoss ||
                 s.code() == absl::StatusCode::kResourceExhausted,
             s.ToString());
  FUZZ_CHECK(!absl::StrContains(s.message(), '\n'), s.ToString());
}

void CheckImage(const absl::Status& s, const RgbImage& img) {
  if (!s.ok()) return CheckError(s);
  FUZZ_CHECK(img.pixels.size() == size_t{3} * img.width * img.rows,
             "pixels of the rows said");
  FUZZ_CHECK(img.row_begin >= 0 && img.row_begin + img.rows <= img.height,
             "the band inside the image");
}

void CheckTransform(const uint8_t* data, size_t size, bool train) {
  ImageTransformSpec spec;
  spec.size = 16;
  spec.resize_size = 18;
  spec.random_crop = train;
  spec.horizontal_flip = train;
  spec.max_pixels = kMaxPixels;
  absl::StatusOr<ImageTransform> t = ImageTransform::Create(spec);
  FUZZ_CHECK(t.ok(), t.status().ToString());
  std::vector<float> a(3 * 16 * 16), b(3 * 16 * 16);
  const absl::Status s = t->Apply(data, size, 0x9e3779b97f4a7c15ULL, a.data());
  if (!s.ok()) return CheckError(s);
  for (float v : a) FUZZ_CHECK(std::isfinite(v), "a finite output");
  FUZZ_CHECK(t->Apply(data, size, 0x9e3779b97f4a7c15ULL, b.data()).ok(),
             "the same bytes decode twice");
  FUZZ_CHECK(a == b, "the same output twice");
}

}  // namespace
}  // namespace ringleader

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringleader;
  RgbImage img;
  // A band of the middle rows at 1/2 scale, then all of it.
  CheckImage(DecodeJpeg(
                 data, size,
                 [](const JpegHeader& h) {
                   JpegPlan p;
                   p.scale_denom = 2;
                   p.row_begin = h.height / 4;
                   p.row_end = h.height / 2;
                   return p;
                 },
                 &img, kMaxPixels),
             img);
  CheckImage(DecodeJpeg(
                 data, size, [](const JpegHeader&) { return JpegPlan(); }, &img,
                 kMaxPixels),
             img);
  CheckImage(DecodePng(data, size, &img, kMaxPixels), img);
  CheckTransform(data, size, true);
  CheckTransform(data, size, false);
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  const size_t tail = std::min(size, kImageTailBytes);
  absl::Status ends = CheckEncodedImageEnds(bytes.substr(0, 16),
                                            bytes.substr(size - tail), size);
  if (!ends.ok()) CheckError(ends);
  return 0;
}
