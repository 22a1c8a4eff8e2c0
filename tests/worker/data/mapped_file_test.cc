#include "worker/data/mapped_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/data/test_files.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;
using testing_files::TempDir;
using testing_files::TempPath;
using testing_files::WriteFile;

std::string Contents(const MappedFile& f) {
  return std::string(reinterpret_cast<const char*>(f.data()), f.size());
}

TEST(MappedFileTest, MapsTheWholeFile) {
  const std::string path = TempPath("whole");
  std::string bytes(10000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i);
  WriteFile(path, bytes);
  absl::StatusOr<MappedFile> f = MappedFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->path(), path);
  EXPECT_EQ(f->size(), bytes.size());
  EXPECT_EQ(Contents(*f), bytes);
}

TEST(MappedFileTest, EmptyFileIsFine) {
  const std::string path = TempPath("empty");
  WriteFile(path, "");
  absl::StatusOr<MappedFile> f = MappedFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->size(), 0u);
  EXPECT_EQ(f->data(), nullptr);
}

TEST(MappedFileTest, MissingFileIsNotFoundNamingThePath) {
  const std::string path = TempPath("does-not-exist");
  absl::StatusOr<MappedFile> f = MappedFile::Open(path);
  EXPECT_EQ(f.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(f.status().message()), HasSubstr(path));
}

TEST(MappedFileTest, UnreadableFileIsPermissionDenied) {
  if (geteuid() == 0) {
    GTEST_SKIP() << "running as root, which reads any file regardless of mode";
  }
  const std::string path = TempPath("unreadable");
  WriteFile(path, "secret");
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  absl::StatusOr<MappedFile> f = MappedFile::Open(path);
  EXPECT_EQ(f.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(f.status().message()), HasSubstr(path));
}

TEST(MappedFileTest, DirectoryIsInvalidArgument) {
  const std::string dir = TempDir("a-directory");
  absl::StatusOr<MappedFile> f = MappedFile::Open(dir);
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(f.status().message()), HasSubstr(dir));
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("directory"));
}

// Opening a FIFO without a writer must not block.
TEST(MappedFileTest, FifoIsInvalidArgumentWithoutBlocking) {
  const std::string path = TempPath("fifo");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  absl::StatusOr<MappedFile> f = MappedFile::Open(path);
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("FIFO"));
}

TEST(MappedFileTest, DeviceIsInvalidArgument) {
  absl::StatusOr<MappedFile> f = MappedFile::Open("/dev/null");
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("/dev/null"));
}

TEST(MappedFileTest, MovesTransferTheMapping) {
  const std::string path = TempPath("moved");
  WriteFile(path, "abcdef");
  absl::StatusOr<MappedFile> f = MappedFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  const uint8_t* data = f->data();

  MappedFile a(std::move(*f));
  EXPECT_EQ(a.data(), data);
  EXPECT_EQ(Contents(a), "abcdef");
  EXPECT_EQ(f->data(), nullptr);  // NOLINT: checking the moved-from state.
  EXPECT_EQ(f->size(), 0u);

  const std::string other_path = TempPath("other");
  WriteFile(other_path, "xyz");
  absl::StatusOr<MappedFile> other = MappedFile::Open(other_path);
  ASSERT_TRUE(other.ok()) << other.status();
  a = std::move(*other);  // Unmaps "abcdef", takes "xyz".
  EXPECT_EQ(Contents(a), "xyz");
  EXPECT_EQ(a.path(), other_path);

  MappedFile& self = a;
  a = std::move(self);
  EXPECT_EQ(Contents(a), "xyz");
}

// The file stays readable through the mapping after its name is gone.
TEST(MappedFileTest, SurvivesUnlink) {
  const std::string path = TempPath("unlinked");
  WriteFile(path, "still here");
  absl::StatusOr<MappedFile> f = MappedFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(unlink(path.c_str()), 0);
  EXPECT_EQ(Contents(*f), "still here");
}

}  // namespace
}  // namespace ringleader
