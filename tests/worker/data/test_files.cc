#include "tests/worker/data/test_files.h"

#include <sys/stat.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace testing_files {
namespace {

void AppendBigEndian(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((v >> shift) & 0xff));
  }
}

}  // namespace

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/", name);
}

std::string TempDir(const std::string& name) {
  const std::string dir = TempPath(name);
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

std::string Gzip(const std::string& data) {
  z_stream strm{};
  // 15 + 16: a gzip wrapper instead of zlib's.
  EXPECT_EQ(deflateInit2(&strm, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
                         Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&strm, data.size()) + 64, '\0');
  strm.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  strm.avail_in = static_cast<uInt>(data.size());
  strm.next_out = reinterpret_cast<Bytef*>(out.data());
  strm.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&strm, Z_FINISH), Z_STREAM_END);
  out.resize(strm.total_out);
  deflateEnd(&strm);
  return out;
}

std::string IdxHeader(uint32_t magic, const std::vector<uint32_t>& dims) {
  std::string out;
  AppendBigEndian(out, magic);
  for (uint32_t d : dims) AppendBigEndian(out, d);
  return out;
}

std::string IdxImagesFile(uint32_t count, uint32_t rows, uint32_t cols) {
  std::string out = IdxHeader(0x00000803, {count, rows, cols});
  const uint64_t n = uint64_t{count} * rows * cols;
  for (uint64_t i = 0; i < n; ++i) out.push_back(static_cast<char>(i % 251));
  return out;
}

std::string IdxLabelsFile(uint32_t count) {
  std::string out = IdxHeader(0x00000801, {count});
  for (uint32_t i = 0; i < count; ++i) out.push_back(static_cast<char>(i % 10));
  return out;
}

}  // namespace testing_files
}  // namespace ringleader
