#include "worker/data/image_resample.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ringleader {
namespace {

// Pillow's PRECISION_BITS: 32 - 8 (pixel) - 2 (headroom).
constexpr int kPrecisionBits = 32 - 8 - 2;

double Triangle(double x) {
  if (x < 0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Pillow's clip8: the fixed-point sum's integer part, clamped to a byte.
uint8_t Clip8(int32_t v) {
  const int32_t x = v >> kPrecisionBits;
  return static_cast<uint8_t>(x < 0 ? 0 : (x > 255 ? 255 : x));
}

}  // namespace

int ResampleAxis::min_first() const {
  int m = first.empty() ? 0 : first[0];
  for (int f : first) m = std::min(m, f);
  return m;
}

int ResampleAxis::end() const {
  int e = 0;
  for (size_t i = 0; i < first.size(); ++i)
    e = std::max(e, first[i] + count[i]);
  return e;
}

ResampleAxis PlanResampleAxis(int in_size, double in0, double in1, int out_size,
                              int out_begin, int out_count) {
  ResampleAxis a;
  a.identity = in_size == out_size && in0 == 0 && in1 == in_size;
  const double scale = (in1 - in0) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = 1.0 * filterscale;
  a.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  a.first.resize(out_count);
  a.count.resize(out_count);
  a.coeffs.assign(static_cast<size_t>(out_count) * a.ksize, 0);
  std::vector<double> k(a.ksize);
  for (int i = 0; i < out_count; ++i) {
    const int xx = out_begin + i;
    const double center = in0 + (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    // (int) truncates as Pillow's casts do.
    const int xmin = std::max(0, static_cast<int>(center - support + 0.5));
    const int xmax =
        std::min(in_size, static_cast<int>(center + support + 0.5)) - xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      k[x] = Triangle((x + xmin - center + 0.5) * ss);
      ww += k[x];
    }
    int32_t* out = a.coeffs.data() + static_cast<size_t>(i) * a.ksize;
    for (int x = 0; x < xmax; ++x) {
      const double w = ww != 0.0 ? k[x] / ww : k[x];
      out[x] = static_cast<int32_t>(w < 0 ? -0.5 + w * (1 << kPrecisionBits)
                                          : 0.5 + w * (1 << kPrecisionBits));
    }
    a.first[i] = xmin;
    a.count[i] = std::max(0, xmax);
  }
  return a;
}

namespace {

// One row of the horizontal pass: `in` is a source row from the crop's
// left edge, `out` receives x.first.size() pixels.
void HorizontalRow(const uint8_t* in, const ResampleAxis& x, uint8_t* out) {
  const size_t n = x.first.size();
  for (size_t i = 0; i < n; ++i) {
    const int32_t* k = x.coeffs.data() + i * x.ksize;
    const uint8_t* p = in + 3 * static_cast<size_t>(x.first[i]);
    int32_t s0 = 1 << (kPrecisionBits - 1), s1 = s0, s2 = s0;
    for (int t = 0; t < x.count[i]; ++t, p += 3) {
      s0 += p[0] * k[t];
      s1 += p[1] * k[t];
      s2 += p[2] * k[t];
    }
    out[3 * i] = Clip8(s0);
    out[3 * i + 1] = Clip8(s1);
    out[3 * i + 2] = Clip8(s2);
  }
}

// One row of the vertical pass over `rows` (row r of the band at
// rows + r * stride, the band starting at source row `band_first`): the
// taps accumulate whole rows into `acc`, a loop over bytes the compiler
// vectorizes (integer sums, so the order changes nothing).
void VerticalRow(const uint8_t* rows, size_t stride, int band_first,
                 const ResampleAxis& y, size_t i, size_t width_bytes,
                 std::vector<int32_t>& acc, uint8_t* out) {
  const int32_t* k = y.coeffs.data() + i * y.ksize;
  const uint8_t* base = rows + (y.first[i] - band_first) * stride;
  acc.assign(width_bytes, 1 << (kPrecisionBits - 1));
  int32_t* a = acc.data();
  for (int t = 0; t < y.count[i]; ++t) {
    const uint8_t* p = base + t * stride;
    const int32_t w = k[t];
    for (size_t b = 0; b < width_bytes; ++b) a[b] += p[b] * w;
  }
  for (size_t b = 0; b < width_bytes; ++b) out[b] = Clip8(a[b]);
}

}  // namespace

void ResampleBilinear(const RgbImage& src, int x_offset, int y_offset,
                      const ResampleAxis& x, const ResampleAxis& y,
                      std::vector<uint8_t>& scratch, uint8_t* dst) {
  const size_t out_w = x.first.size();
  const size_t out_h = y.first.size();
  const size_t row_bytes = 3 * out_w;
  const int y_first = y.min_first();
  const int y_end = y.end();
  // The horizontal pass, over the source rows the vertical one reads (or
  // the copy of the window's columns when PIL would skip it).
  const size_t band_rows = static_cast<size_t>(std::max(0, y_end - y_first));
  scratch.resize(band_rows * row_bytes);
  for (size_t r = 0; r < band_rows; ++r) {
    const uint8_t* in = src.Row(y_offset + y_first + static_cast<int>(r)) +
                        3 * static_cast<size_t>(x_offset);
    uint8_t* out = scratch.data() + r * row_bytes;
    if (x.identity) {
      std::memcpy(
          out, in + 3 * static_cast<size_t>(x.first.empty() ? 0 : x.first[0]),
          row_bytes);
    } else {
      HorizontalRow(in, x, out);
    }
  }
  thread_local std::vector<int32_t> acc;
  for (size_t i = 0; i < out_h; ++i) {
    uint8_t* out = dst + i * row_bytes;
    if (y.identity) {
      std::memcpy(out, scratch.data() + (y.first[i] - y_first) * row_bytes,
                  row_bytes);
    } else {
      VerticalRow(scratch.data(), row_bytes, y_first, y, i, row_bytes, acc,
                  out);
    }
  }
}

}  // namespace ringleader
