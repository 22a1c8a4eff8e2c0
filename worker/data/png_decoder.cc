#include "worker/data/png_decoder.h"

#include <spng.h>

#include <memory>
#include <new>

#include "absl/strings/str_cat.h"

namespace ringleader {
namespace {

struct CtxFree {
  void operator()(spng_ctx* c) const { spng_ctx_free(c); }
};

absl::Status SpngError(int err) {
  return absl::DataLossError(
      absl::StrCat("not a readable PNG (libspng: ", spng_strerror(err), ")"));
}

// Chunks PIL would read are small; a text or ICC chunk of more than this
// is an attempt to make the decoder allocate.
constexpr size_t kMaxChunkBytes = size_t{64} << 20;

}  // namespace

absl::Status DecodePng(const uint8_t* data, size_t size, RgbImage* out,
                       int64_t max_pixels) {
  std::unique_ptr<spng_ctx, CtxFree> ctx(spng_ctx_new(0));
  if (ctx == nullptr) return absl::ResourceExhaustedError("spng_ctx_new");
  spng_set_chunk_limits(ctx.get(), kMaxChunkBytes, kMaxChunkBytes);
  if (int e = spng_set_png_buffer(ctx.get(), data, size); e != 0) {
    return SpngError(e);
  }
  spng_ihdr ihdr;
  if (int e = spng_get_ihdr(ctx.get(), &ihdr); e != 0) return SpngError(e);
  if (int64_t{ihdr.width} * ihdr.height > max_pixels) {
    return absl::DataLossError(absl::StrCat(
        "a PNG of ", ihdr.width, " x ", ihdr.height, " pixels, more than the ",
        max_pixels, " this worker decodes"));
  }
  size_t bytes = 0;
  if (int e = spng_decoded_image_size(ctx.get(), SPNG_FMT_RGB8, &bytes);
      e != 0) {
    return SpngError(e);
  }
  out->width = static_cast<int>(ihdr.width);
  out->height = static_cast<int>(ihdr.height);
  out->row_begin = 0;
  out->rows = out->height;
  try {
    out->pixels.resize(bytes);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", bytes, " bytes for a PNG"));
  }
  if (int e = spng_decode_image(ctx.get(), out->pixels.data(), bytes,
                                SPNG_FMT_RGB8, 0);
      e != 0) {
    return SpngError(e);
  }
  return absl::OkStatus();
}

}  // namespace ringleader
