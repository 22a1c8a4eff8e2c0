// The tar reader on archives built here (ustar, GNU long names, pax paths)
// and on every way one can be broken: it answers with DataLoss, never a
// crash or a read past the end.
#include "worker/data/tar_reader.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/data/image_test_files.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;
using testing_files::TarBytes;

absl::StatusOr<std::vector<TarMember>> List(const std::string& tar) {
  return ListTarMembers(reinterpret_cast<const uint8_t*>(tar.data()),
                        tar.size());
}

TEST(TarReaderTest, ListsRegularFilesInOrderWithTheirData) {
  const std::string tar =
      TarBytes({{"a/0001.jpg", std::string(700, 'x')}, {"a/0001.cls", "3"}});
  auto members = List(tar);
  ASSERT_TRUE(members.ok()) << members.status();
  ASSERT_EQ(members->size(), 2u);
  EXPECT_EQ((*members)[0].name, "a/0001.jpg");
  EXPECT_EQ((*members)[0].offset, 512u);
  EXPECT_EQ((*members)[0].size, 700u);
  EXPECT_EQ((*members)[1].name, "a/0001.cls");
  EXPECT_EQ(tar.substr((*members)[1].offset, 1), "3");
}

TEST(TarReaderTest, WithoutTrailerStillReads) {
  std::string tar = TarBytes({{"k.cls", "1"}});
  tar.resize(tar.size() - 1024);
  auto members = List(tar);
  ASSERT_TRUE(members.ok());
  EXPECT_EQ(members->size(), 1u);
}

TEST(TarReaderTest, GnuLongNameAndPaxPathNameTheNextMember) {
  const std::string long_name(150, 'n');
  std::string tar = TarBytes({{"././@LongLink", long_name}, {"short", "1"}});
  // Turn the first member into a GNU 'L' header (checksum recomputed).
  tar[156] = 'L';
  std::memset(&tar[148], ' ', 8);
  unsigned sum = 0;
  for (int i = 0; i < 512; ++i) sum += static_cast<unsigned char>(tar[i]);
  std::snprintf(&tar[148], 8, "%06o", sum);
  auto members = List(tar);
  ASSERT_TRUE(members.ok()) << members.status();
  ASSERT_EQ(members->size(), 1u);
  EXPECT_EQ((*members)[0].name, long_name);
}

TEST(TarReaderTest, BadChecksumIsDataLoss) {
  std::string tar = TarBytes({{"k.cls", "1"}});
  tar[0] = 'j';
  auto members = List(tar);
  EXPECT_EQ(members.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(members.status().message(), HasSubstr("checksum at byte 0"));
}

TEST(TarReaderTest, MemberPastTheEndIsTruncation) {
  std::string tar = TarBytes({{"k.jpg", std::string(2000, 'x')}});
  tar.resize(1200);
  auto members = List(tar);
  EXPECT_EQ(members.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(members.status().message(), HasSubstr("truncated tar archive"));
}

TEST(TarReaderTest, NotATarIsDataLoss) {
  const std::string junk(4096, 'z');
  EXPECT_EQ(List(junk).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(List("").ok());  // No header at all: no members.
}

}  // namespace
}  // namespace ringleader
