#ifndef RINGLEADER_WORKER_DATA_NPY_HEADER_H_
#define RINGLEADER_WORKER_DATA_NPY_HEADER_H_

// The header of a NumPy .npy file (numpy.lib.format, versions 1.0, 2.0 and
// 3.0): the magic "\x93NUMPY", a version, the header's length, then a
// Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (60000, 28, 28), }
// padded with spaces and a newline; the array's bytes follow.
//
// Files come from users, so the parser trusts nothing: it reads only within
// the bytes it is given, whatever they hold, and every problem is an error
// naming the file and what is wrong, never a crash. It accepts the subset of
// the format that readers here can map as is: C order, little-endian (or
// single-byte) numeric types.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ringleader {

// The element types accepted, as numpy names them.
enum class NpyDtype {
  kUint8,    // |u1
  kInt8,     // |i1
  kUint16,   // <u2
  kInt16,    // <i2
  kUint32,   // <u4
  kInt32,    // <i4
  kInt64,    // <i8
  kFloat16,  // <f2
  kFloat32,  // <f4
  kFloat64,  // <f8
};

size_t NpyDtypeSize(NpyDtype dtype);
// "uint8", "float32", ... (numpy's names).
const char* NpyDtypeName(NpyDtype dtype);
bool NpyDtypeIsFloat(NpyDtype dtype);
// The descr np.save writes: "|u1", "<f4", ...
const char* NpyDescr(NpyDtype dtype);

// numpy 2 allows 64 dimensions (1.x: 32); more is not a real array.
inline constexpr size_t kMaxNpyDims = 64;

struct NpyHeader {
  NpyDtype dtype = NpyDtype::kUint8;
  // Row-major sizes, each >= 0; empty for a 0-d (scalar) array.
  std::vector<int64_t> shape;
  // Where the array's bytes start, from the start of the file.
  size_t data_offset = 0;
  // The product of shape times the element size. data_offset + data_bytes
  // never exceeds the size parsed (bytes past the data are ignored, as
  // numpy ignores them).
  size_t data_bytes = 0;

  // The product of shape (1 for a scalar).
  int64_t num_elements() const;
};

// Parses the header of the .npy file whose bytes are data[0, size) (`data`
// may be null when size is 0). `path` only names the file in messages.
//   InvalidArgument: not a .npy file (bad magic), an unknown version, a
//     malformed header dict, an unsupported dtype (big-endian, bool,
//     object, structured, string, complex, uint64, ...), fortran_order
//     True, a negative dimension, or a shape whose size overflows;
//   DataLoss: the file ends inside the header or before the data the shape
//     describes ("truncated: header says N bytes of data, file has M").
absl::StatusOr<NpyHeader> ParseNpyHeader(const uint8_t* data, size_t size,
                                         absl::string_view path);

// The bytes np.save writes before the data of a C-order array of `dtype`
// and `shape` (version 1.0, or 2.0 for a header over 64 KiB; padded so the
// data starts at a multiple of 64), byte for byte.
std::string FormatNpyHeader(NpyDtype dtype, const std::vector<int64_t>& shape);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_NPY_HEADER_H_
