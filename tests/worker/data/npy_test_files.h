#ifndef RINGLEADER_TESTS_WORKER_DATA_NPY_TEST_FILES_H_
#define RINGLEADER_TESTS_WORKER_DATA_NPY_TEST_FILES_H_

// Building .npy and raw token files byte by byte in C++, so unit tests do
// not depend on Python and can make every malformed variant; and finding
// /usr/bin/python3 with numpy for the tests that check against files numpy
// itself wrote.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "worker/data/npy_header.h"

namespace ringleader {
namespace testing_files {

// The little-endian bytes of `values`.
template <typename T>
std::string RawBytes(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(&out[0], values.data(), out.size());
  return out;
}

// A .npy file as np.save writes it: FormatNpyHeader, then `data`.
std::string NpyBytes(NpyDtype dtype, const std::vector<int64_t>& shape,
                     const std::string& data);

template <typename T>
std::string NpyOf(NpyDtype dtype, const std::vector<int64_t>& shape,
                  const std::vector<T>& values) {
  return NpyBytes(dtype, shape, RawBytes(values));
}

// A .npy file with an arbitrary header dict (no padding added) and version
// major.0, for malformed headers.
std::string NpyWithDict(const std::string& dict, const std::string& data = "",
                        int major = 1);

// Writes `bytes` to a fresh file under the test's temporary directory and
// returns its path.
std::string WriteTemp(const std::string& name, const std::string& bytes);

// Runs `script` with /usr/bin/python3 (with numpy) and returns true when it
// exits 0. Sets `why` when python3 or numpy is missing (the caller skips).
bool HaveNumpy(std::string& why);
bool RunPython(const std::string& script);

}  // namespace testing_files
}  // namespace ringleader

#endif  // RINGLEADER_TESTS_WORKER_DATA_NPY_TEST_FILES_H_
