#include "worker/data/jpeg_decoder.h"

// jpeglib.h needs FILE and size_t declared first.
#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jpeglib.h"
// jerror.h after jpeglib.h: it names JWRN_JPEG_EOF.
#include "jerror.h"

namespace ringleader {
namespace {

// Progressive files may hold any number of scans, each a pass over the
// image: a few hundred are plenty for any real encoder (libjpeg-turbo's
// TurboJPEG limits them to 500 on request), thousands are a slow-decoding
// attack. PIL does not limit them; we refuse past this.
constexpr int kMaxScans = 1000;

// libjpeg reports errors through callbacks that must not return; the
// error callback longjmps back to the setjmp in the function that called
// libjpeg. Everything those functions touch after setjmp lives in this
// struct (plain C data, owned by the caller), so no C++ destructor is
// skipped by the jump.
struct Session {
  jpeg_decompress_struct info;
  jpeg_error_mgr errors;
  jpeg_progress_mgr progress;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool created;
  bool truncated;
};

Session* SessionOf(j_common_ptr c) {
  return static_cast<Session*>(c->client_data);
}

[[noreturn]] void OnError(j_common_ptr c) {
  Session* s = SessionOf(c);
  (*c->err->format_message)(c, s->message);
  std::longjmp(s->jump, 1);
}

// Warnings (level -1) are corrupt-data notes that libjpeg decodes through,
// as PIL does, except the end of the data before the image's end: PIL
// refuses a truncated file, and so do we. Trace messages are dropped.
void OnMessage(j_common_ptr c, int level) {
  if (level == -1 && c->err->msg_code == JWRN_JPEG_EOF) {
    SessionOf(c)->truncated = true;
  }
}

void OnProgress(j_common_ptr c) {
  if (!c->is_decompressor) return;
  auto* d = reinterpret_cast<j_decompress_ptr>(c);
  if (d->input_scan_number > kMaxScans) {
    Session* s = SessionOf(c);
    std::snprintf(s->message, sizeof(s->message),
                  "more than %d progressive scans", kMaxScans);
    std::longjmp(s->jump, 1);
  }
}

void Begin(Session* s) {
  std::memset(s, 0, sizeof(*s));
  s->info.err = jpeg_std_error(&s->errors);
  s->errors.error_exit = OnError;
  s->errors.emit_message = OnMessage;
  s->progress.progress_monitor = OnProgress;
}

// Creates the decompressor and reads the header; false on a libjpeg error
// (s->message says which). Called right after setjmp by its callers.
void CreateAndReadHeader(Session* s, const uint8_t* data, size_t size) {
  jpeg_create_decompress(&s->info);
  s->created = true;
  s->info.client_data = s;
  s->info.progress = &s->progress;
  jpeg_mem_src(&s->info, data, static_cast<unsigned long>(size));
  jpeg_read_header(&s->info, TRUE);
}

JpegHeader HeaderOf(const jpeg_decompress_struct& info) {
  JpegHeader h;
  h.width = static_cast<int>(info.image_width);
  h.height = static_cast<int>(info.image_height);
  h.components = info.num_components;
  h.progressive = info.progressive_mode != 0;
  return h;
}

bool HeaderIn(Session* s, const uint8_t* data, size_t size) {
  if (setjmp(s->jump)) return false;
  CreateAndReadHeader(s, data, size);
  return true;
}

// PIL reads CMYK JPEGs with Adobe's polarity (stored values inverted,
// rawmode "CMYK;I") and converts to RGB as Pillow's Convert.c cmyk2rgb:
// with nk = 255 - k, each of R, G, B = nk - c * nk / 255 (rounded as
// MULDIV255). On the stored values s: nk = s_k and c = 255 - s_c.
void CmykRowToRgb(const uint8_t* in, int width, uint8_t* out) {
  for (int x = 0; x < width; ++x, in += 4, out += 3) {
    const int nk = in[3];
    for (int ch = 0; ch < 3; ++ch) {
      const int t = (255 - in[ch]) * nk + 128;
      out[ch] = static_cast<uint8_t>(nk - (((t >> 8) + t) >> 8));
    }
  }
}

struct DecodeArgs {
  const uint8_t* data;
  size_t size;
  absl::FunctionRef<JpegPlan(const JpegHeader&)>* plan;
  RgbImage* out;
  int64_t max_pixels;
  std::vector<uint8_t>* cmyk_row;  // Caller-owned scratch.
  bool too_large;
  bool stopped_early;
};

// The C++ calls in here (the plan, vector resizes) complete before any
// longjmp; only libjpeg's frames are jumped over.
bool DecodeIn(Session* s, DecodeArgs* a) {
  if (setjmp(s->jump)) return false;
  CreateAndReadHeader(s, a->data, a->size);
  const JpegHeader header = HeaderOf(s->info);
  if (int64_t{header.width} * header.height > a->max_pixels) {
    a->too_large = true;
    return false;
  }
  const JpegPlan plan = (*a->plan)(header);
  s->info.scale_num = 1;
  s->info.scale_denom = static_cast<unsigned>(plan.scale_denom);
  const bool cmyk = s->info.jpeg_color_space == JCS_CMYK ||
                    s->info.jpeg_color_space == JCS_YCCK;
  s->info.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  jpeg_start_decompress(&s->info);
  const int w = static_cast<int>(s->info.output_width);
  const int h = static_cast<int>(s->info.output_height);
  const int begin = std::max(0, std::min(plan.row_begin, h));
  const int end = std::max(begin, std::min(plan.row_end, h));
  RgbImage& out = *a->out;
  out.width = w;
  out.height = h;
  out.row_begin = begin;
  out.rows = end - begin;
  out.pixels.resize(size_t{3} * size_t(w) * size_t(out.rows));
  if (cmyk) a->cmyk_row->resize(size_t{4} * size_t(w));
  if (begin > 0) jpeg_skip_scanlines(&s->info, static_cast<JDIMENSION>(begin));
  for (int y = begin; y < end; ++y) {
    uint8_t* dst = out.MutableRow(y);
    JSAMPROW row = cmyk ? a->cmyk_row->data() : dst;
    if (jpeg_read_scanlines(&s->info, &row, 1) != 1) return false;
    if (cmyk) CmykRowToRgb(a->cmyk_row->data(), w, dst);
  }
  a->stopped_early = end < h;
  if (a->stopped_early) {
    jpeg_abort_decompress(&s->info);
  } else {
    jpeg_finish_decompress(&s->info);
  }
  return true;
}

// A JPEG ends with EOI (FF D9); writers may append a few bytes after it.
// Nothing in entropy-coded data reads FF D9, so a file without one near its
// end was cut. The check stands in for libjpeg's end-of-data warning when a
// decode stops at the last row a crop needs.
bool HasEndMarker(const uint8_t* data, size_t size) {
  const size_t window = std::min<size_t>(size, 1024);
  for (size_t i = size - window; i + 1 < size; ++i) {
    if (data[i] == 0xFF && data[i + 1] == 0xD9) return true;
  }
  return false;
}

absl::Status Finish(Session* s, bool ok) {
  if (s->created) jpeg_destroy_decompress(&s->info);
  if (ok) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrCat("not a readable JPEG (libjpeg: ", s->message, ")"));
}

}  // namespace

absl::StatusOr<JpegHeader> ReadJpegHeader(const uint8_t* data, size_t size) {
  Session s;
  Begin(&s);
  const bool ok = HeaderIn(&s, data, size);
  JpegHeader h;
  if (ok) h = HeaderOf(s.info);
  if (absl::Status st = Finish(&s, ok); !st.ok()) return st;
  return h;
}

absl::Status DecodeJpeg(const uint8_t* data, size_t size,
                        absl::FunctionRef<JpegPlan(const JpegHeader&)> plan,
                        RgbImage* out, int64_t max_pixels) {
  std::vector<uint8_t> cmyk_row;
  DecodeArgs args{data, size, &plan, out, max_pixels, &cmyk_row, false, false};
  Session s;
  Begin(&s);
  bool ok = false;
  try {
    ok = DecodeIn(&s, &args);
  } catch (const std::bad_alloc&) {
    std::snprintf(s.message, sizeof(s.message), "out of memory");
  }
  if (args.too_large) {
    Finish(&s, true).IgnoreError();
    return absl::DataLossError(absl::StrCat(
        "a JPEG of more than the ", max_pixels, " pixels this worker decodes"));
  }
  if (absl::Status st = Finish(&s, ok); !st.ok()) return st;
  if (s.truncated || (args.stopped_early && !HasEndMarker(data, size))) {
    return absl::DataLossError("a truncated JPEG (its data ends early)");
  }
  return absl::OkStatus();
}

}  // namespace ringleader
