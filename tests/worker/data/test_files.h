#ifndef RINGLEADER_TESTS_WORKER_DATA_TEST_FILES_H_
#define RINGLEADER_TESTS_WORKER_DATA_TEST_FILES_H_

// Building IDX and gzip files byte by byte, so tests can make every kind of
// malformed input the readers must reject.

#include <cstdint>
#include <string>
#include <vector>

namespace ringleader {
namespace testing_files {

// A fresh path under the test's temporary directory.
std::string TempPath(const std::string& name);
// Creates a fresh empty directory under the temporary directory.
std::string TempDir(const std::string& name);

void WriteFile(const std::string& path, const std::string& bytes);

// `data` as one gzip member (zlib's deflate with the gzip wrapper).
std::string Gzip(const std::string& data);

// magic, big-endian, then each size as big-endian uint32.
std::string IdxHeader(uint32_t magic, const std::vector<uint32_t>& dims);

// A valid images file: header [count, rows, cols], pixel i = i % 251.
std::string IdxImagesFile(uint32_t count, uint32_t rows, uint32_t cols);
// A valid labels file: label i = i % 10.
std::string IdxLabelsFile(uint32_t count);

}  // namespace testing_files
}  // namespace ringleader

#endif  // RINGLEADER_TESTS_WORKER_DATA_TEST_FILES_H_
