#include "worker/data/byte_reader.h"

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/data/test_files.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;
using testing_files::Gzip;
using testing_files::TempPath;
using testing_files::WriteFile;

// Everything the reader yields, reading `piece` bytes at a time.
absl::StatusOr<std::string> ReadAll(const std::string& path,
                                    size_t piece = 4096) {
  absl::StatusOr<std::unique_ptr<ByteReader>> reader = OpenMaybeGzip(path);
  if (!reader.ok()) return reader.status();
  std::string out;
  std::string buf(piece, '\0');
  while (true) {
    absl::StatusOr<size_t> got = (*reader)->Read(buf.data(), buf.size());
    if (!got.ok()) return got.status();
    if (*got == 0) return out;
    out.append(buf, 0, *got);
  }
}

// Incompressible bytes, so the gzip file spans many of the reader's input
// buffers.
std::string Noise(size_t n) {
  std::string out(n, '\0');
  uint64_t x = 88172645463325252ULL;
  for (char& c : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
  return out;
}

TEST(ByteReaderTest, ReadsPlainFile) {
  const std::string path = TempPath("plain.bin");
  WriteFile(path, "hello, world");
  absl::StatusOr<std::string> got = ReadAll(path, 5);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "hello, world");
}

TEST(ByteReaderTest, EmptyAndOneByteFilesArePlain) {
  WriteFile(TempPath("empty.bin"), "");
  WriteFile(TempPath("one.bin"), "\x1f");
  EXPECT_EQ(ReadAll(TempPath("empty.bin")).value(), "");
  EXPECT_EQ(ReadAll(TempPath("one.bin")).value(), "\x1f");
}

TEST(ByteReaderTest, ReadsGzipAcrossBufferBoundaries) {
  const std::string data = Noise(300000);
  const std::string path = TempPath("noise.gz");
  WriteFile(path, Gzip(data));
  for (size_t piece : {1u << 20, 4096u, 7u}) {
    absl::StatusOr<std::string> got = ReadAll(path, piece);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, data) << "piece " << piece;
  }
}

TEST(ByteReaderTest, ReadsConcatenatedMembers) {
  const std::string path = TempPath("two.gz");
  WriteFile(path, Gzip("first,") + Gzip("") + Gzip("second"));
  EXPECT_EQ(ReadAll(path).value(), "first,second");
}

TEST(ByteReaderTest, TrailingGarbageAfterGzipIsAnError) {
  const std::string path = TempPath("trailing.gz");
  for (const std::string& junk :
       {std::string("junk data"), std::string(1, '\0'),
        std::string(16, '\0')}) {
    WriteFile(path, Gzip("payload") + junk);
    absl::StatusOr<std::string> got = ReadAll(path);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(path));
    EXPECT_THAT(std::string(got.status().message()),
                HasSubstr("trailing garbage"));
  }
}

TEST(ByteReaderTest, TruncatedGzipIsAnError) {
  const std::string full = Gzip(Noise(10000));
  const std::string path = TempPath("truncated.gz");
  for (size_t cut :
       {size_t{1}, size_t{4}, size_t{8}, full.size() / 2, full.size() - 3}) {
    WriteFile(path, full.substr(0, full.size() - cut));
    absl::StatusOr<std::string> got = ReadAll(path);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss) << cut;
    EXPECT_THAT(std::string(got.status().message()),
                HasSubstr("truncated gzip stream"));
  }
}

TEST(ByteReaderTest, BadChecksumIsAnError) {
  std::string gz = Gzip("some payload bytes");
  gz[gz.size() - 8] ^= 0x01;  // The CRC-32 trailer.
  const std::string path = TempPath("crc.gz");
  WriteFile(path, gz);
  absl::StatusOr<std::string> got = ReadAll(path);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("corrupt gzip data"));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr(path));
}

TEST(ByteReaderTest, CorruptDeflateDataIsAnError) {
  std::string gz = Gzip(std::string(5000, 'a') + Noise(5000));
  const std::string path = TempPath("corrupt.gz");
  int errors = 0;
  // Damage each position after the 10-byte header in turn: every variant
  // must fail (checksum or structure), none may succeed or crash.
  for (size_t pos = 10; pos < gz.size(); pos += 97) {
    std::string bad = gz;
    bad[pos] ^= 0x5a;
    WriteFile(path, bad);
    absl::StatusOr<std::string> got = ReadAll(path);
    EXPECT_FALSE(got.ok()) << "damage at " << pos;
    if (!got.ok()) ++errors;
  }
  EXPECT_GT(errors, 0);
}

TEST(ByteReaderTest, MissingFileIsNotFound) {
  const std::string path = TempPath("does-not-exist");
  absl::StatusOr<std::unique_ptr<ByteReader>> reader = OpenMaybeGzip(path);
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(reader.status().message()), HasSubstr(path));
}

TEST(ByteReaderTest, DirectoryIsAnError) {
  absl::StatusOr<std::string> got = ReadAll(::testing::TempDir());
  EXPECT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr(::testing::TempDir()));
}

}  // namespace
}  // namespace ringleader
