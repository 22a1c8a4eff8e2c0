#ifndef RINGLEADER_TESTS_WORKER_DATA_IMAGE_TEST_FILES_H_
#define RINGLEADER_TESTS_WORKER_DATA_IMAGE_TEST_FILES_H_

// Images for the image-data tests, made in C++ with the encoders of the
// libraries the worker decodes with (libjpeg, libspng), so most tests need
// no Python; and running /usr/bin/python3 with torchvision for the tests
// that compare against it.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ringleader {
namespace testing_files {

// A width x height RGB picture whose mean color says its class: class c is
// a smooth gradient around a hue of its own plus some noise (`seed`), so a
// small model tells classes apart well above chance.
std::vector<uint8_t> ClassPicture(int width, int height, int cls, int seed);

// Baseline (or progressive) JPEG of RGB pixels, quality 90.
std::string EncodeJpeg(int width, int height, const std::vector<uint8_t>& rgb,
                       bool progressive = false, bool grayscale = false);
// 8-bit RGB PNG.
std::string EncodePng(int width, int height, const std::vector<uint8_t>& rgb);

// A ustar archive of `members` (name, bytes) in order, with the two-block
// trailer; names up to 100 bytes.
std::string TarBytes(
    const std::vector<std::pair<std::string, std::string>>& members);

// The whole file; "" when it cannot be read.
std::string ReadBytes(const std::string& path);

// Runs `script` with /usr/bin/python3 and arguments; true when it exits 0.
bool RunPythonArgs(const std::string& script,
                   const std::vector<std::string>& args);
// True when /usr/bin/python3 imports torchvision and PIL; else `why` says
// what to install.
bool HaveTorchvision(std::string& why);

}  // namespace testing_files
}  // namespace ringleader

#endif  // RINGLEADER_TESTS_WORKER_DATA_IMAGE_TEST_FILES_H_
