#include "worker/data/idx_reader.h"

#include <sys/stat.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/data/test_files.h"
#include "worker/data/dataset.h"

namespace ringleader {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_files::Gzip;
using testing_files::IdxHeader;
using testing_files::IdxImagesFile;
using testing_files::IdxLabelsFile;
using testing_files::TempDir;
using testing_files::TempPath;
using testing_files::WriteFile;

constexpr char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";

// Writes `bytes` to a fresh file and reads it as images.
absl::StatusOr<IdxImages> ImagesFrom(const std::string& name,
                                     const std::string& bytes) {
  const std::string path = TempPath(name);
  WriteFile(path, bytes);
  return ReadIdxImages(path);
}

absl::Status ImagesError(const std::string& name, const std::string& bytes) {
  return ImagesFrom(name, bytes).status();
}

TEST(IdxReaderTest, ReadsPlainAndGzipImages) {
  const std::string file = IdxImagesFile(3, 4, 5);
  for (const bool gz : {false, true}) {
    absl::StatusOr<IdxImages> images =
        ImagesFrom(gz ? "images.gz" : "images", gz ? Gzip(file) : file);
    ASSERT_TRUE(images.ok()) << images.status();
    EXPECT_EQ(images->count, 3);
    EXPECT_EQ(images->rows, 4);
    EXPECT_EQ(images->cols, 5);
    ASSERT_EQ(images->pixels.size(), 60u);
    for (size_t i = 0; i < 60; ++i) EXPECT_EQ(images->pixels[i], i % 251);
  }
}

TEST(IdxReaderTest, ReadsLabels) {
  const std::string path = TempPath("labels.gz");
  WriteFile(path, Gzip(IdxLabelsFile(12)));
  absl::StatusOr<std::vector<uint8_t>> labels = ReadIdxLabels(path);
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_THAT(*labels, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1));
}

TEST(IdxReaderTest, ZeroImagesIsAValidFile) {
  absl::StatusOr<IdxImages> images =
      ImagesFrom("zero", IdxImagesFile(0, 28, 28));
  ASSERT_TRUE(images.ok()) << images.status();
  EXPECT_EQ(images->count, 0);
}

TEST(IdxReaderTest, TooShortForHeader) {
  for (const std::string& bytes : {std::string(), std::string("\0\0\x08", 3)}) {
    absl::Status s = ImagesError("short", bytes);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()),
                AllOf(HasSubstr(TempPath("short")), HasSubstr("too short")));
  }
}

TEST(IdxReaderTest, WrongMagic) {
  absl::Status s = ImagesError("magic", "GIF89a......");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              AllOf(HasSubstr(TempPath("magic")), HasSubstr("magic 0x47494638"),
                    HasSubstr("expected 0x00000803")));
}

TEST(IdxReaderTest, LabelFileGivenAsImagesSaysSo) {
  absl::Status s = ImagesError("labels-as-images", IdxLabelsFile(4));
  EXPECT_THAT(std::string(s.message()), HasSubstr("it is an IDX label file"));
  const std::string path = TempPath("images-as-labels");
  WriteFile(path, IdxImagesFile(1, 2, 2));
  EXPECT_THAT(std::string(ReadIdxLabels(path).status().message()),
              HasSubstr("it is an IDX image file"));
}

TEST(IdxReaderTest, UnsupportedElementType) {
  // 0x0D: float32 IDX.
  absl::Status s = ImagesError(
      "float", IdxHeader(0x00000D03, {1, 1, 1}) + std::string(4, '\0'));
  EXPECT_THAT(std::string(s.message()), HasSubstr("element type 0x0d"));
}

TEST(IdxReaderTest, TruncatedHeaderSizes) {
  absl::Status s = ImagesError("dims", IdxHeader(0x803, {10, 28}));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()),
              AllOf(HasSubstr(TempPath("dims")),
                    HasSubstr("inside its dimension sizes")));
}

TEST(IdxReaderTest, ZeroRowsOrColsRejected) {
  EXPECT_THAT(
      std::string(ImagesError("rows0", IdxHeader(0x803, {5, 0, 28})).message()),
      HasSubstr("dimension 1 of [5, 0, 28] must be at least 1"));
  EXPECT_THAT(
      std::string(ImagesError("cols0", IdxHeader(0x803, {5, 28, 0})).message()),
      HasSubstr("dimension 2 of [5, 28, 0] must be at least 1"));
}

TEST(IdxReaderTest, OversizedOrOverflowingSizesRejected) {
  // 2^32-1 cubed overflows 64 bits; 3 x 2^30 is just over the limit.
  for (const std::vector<uint32_t>& dims :
       {std::vector<uint32_t>{0xffffffff, 0xffffffff, 0xffffffff},
        std::vector<uint32_t>{3, 32768, 32768},
        std::vector<uint32_t>{0xffffffff, 1, 1}}) {
    absl::Status s = ImagesError("huge", IdxHeader(0x803, dims));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(
        std::string(s.message()),
        AllOf(HasSubstr(TempPath("huge")), HasSubstr("the largest supported")));
  }
}

TEST(IdxReaderTest, TruncatedPayload) {
  const std::string full = IdxImagesFile(4, 3, 3);
  const std::string cut = full.substr(0, full.size() - 5);
  for (const bool gz : {false, true}) {
    absl::Status s = ImagesError("cut", gz ? Gzip(cut) : cut);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(
        std::string(s.message()),
        AllOf(HasSubstr(TempPath("cut")),
              HasSubstr("need 36 bytes of data but the file holds 31")));
  }
}

TEST(IdxReaderTest, HugeClaimOverTinyFileFailsFast) {
  // Exactly 2 GiB claimed, 10 bytes present: truncation, found after one
  // chunk, not a 2 GiB allocation.
  absl::Status s = ImagesError(
      "claim", Gzip(IdxHeader(0x803, {2, 32768, 32768}) + "0123456789"));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), HasSubstr("the file holds 10"));
}

TEST(IdxReaderTest, TrailingBytesRejected) {
  const std::string extra = IdxImagesFile(2, 2, 2) + "x";
  for (const bool gz : {false, true}) {
    absl::Status s = ImagesError("extra", gz ? Gzip(extra) : extra);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()), AllOf(HasSubstr(TempPath("extra")),
                                                HasSubstr("trailing bytes")));
  }
  // Junk after the gzip stream itself.
  absl::Status s = ImagesError("junk", Gzip(IdxImagesFile(2, 2, 2)) + "junk");
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("trailing garbage after gzip data"));
}

TEST(IdxReaderTest, CorruptGzip) {
  std::string gz = Gzip(IdxImagesFile(10, 28, 28));
  gz[gz.size() - 2] ^= 0xff;  // The length trailer.
  absl::Status s = ImagesError("corrupt", gz);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()),
              AllOf(HasSubstr(TempPath("corrupt")),
                    HasSubstr("corrupt gzip data (zlib: incorrect length "
                              "check)")));
  // Damage inside the compressed data that inflates into more bytes than
  // the header describes: the checksum failure is what is reported.
  gz = Gzip(IdxImagesFile(10, 28, 28));
  gz[gz.size() / 2] ^= 0xff;
  s = ImagesError("corrupt", gz);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), AllOf(HasSubstr(TempPath("corrupt")),
                                              HasSubstr("corrupt gzip data")));
}

TEST(IdxReaderTest, MissingFile) {
  absl::Status s = ReadIdxImages(TempPath("nope")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr(TempPath("nope")));
}

// Random damage to valid files, plain and gzip: every outcome is a value or
// an error, never a crash (run under ASan to also catch bad reads).
TEST(IdxReaderTest, RandomDamageNeverCrashes) {
  const std::string plain = IdxImagesFile(3, 4, 4);
  const std::string gz = Gzip(plain);
  uint64_t x = 0x2545F4914F6CDD1DULL;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  int ok = 0;
  for (int trial = 0; trial < 600; ++trial) {
    std::string bytes = (trial % 2 == 0) ? plain : gz;
    switch (next() % 3) {
      case 0:  // Flip bytes.
        for (int k = 0; k < 3; ++k) bytes[next() % bytes.size()] ^= next();
        break;
      case 1:  // Cut.
        bytes.resize(next() % bytes.size());
        break;
      case 2:  // Append.
        bytes.append(next() % 7 + 1, static_cast<char>(next()));
        break;
    }
    if (ImagesFrom("fuzz", bytes).ok()) ++ok;
  }
  // Some byte flips land in pixels and leave a valid file; most do not.
  EXPECT_LT(ok, 600);
}

// A split directory with the given files.
std::string SplitDir(const std::string& name,
                     const std::vector<std::array<std::string, 2>>& files) {
  const std::string dir = TempDir(name);
  for (const auto& [file, bytes] : files) {
    WriteFile(absl::StrCat(dir, "/", file), bytes);
  }
  return dir;
}

TEST(LoadIdxSplitTest, LoadsCanonicalNames) {
  const std::string dir =
      SplitDir("canonical",
               {{"train-images-idx3-ubyte.gz", Gzip(IdxImagesFile(20, 28, 28))},
                {"train-labels-idx1-ubyte.gz", Gzip(IdxLabelsFile(20))},
                {"t10k-images-idx3-ubyte", IdxImagesFile(5, 28, 28)},
                {"t10k-labels-idx1-ubyte", IdxLabelsFile(5)}});
  absl::StatusOr<IdxDataset> train = LoadIdxSplit(dir, Split::kTrain);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(train->size(), 20);
  EXPECT_EQ(train->labels.size(), 20u);
  absl::StatusOr<IdxDataset> test = LoadIdxSplit(dir, Split::kTest);
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(test->size(), 5);
}

TEST(LoadIdxSplitTest, LoadsDottedNames) {
  const std::string dir = SplitDir(
      "dotted", {{"t10k-images.idx3-ubyte", IdxImagesFile(2, 28, 28)},
                 {"t10k-labels.idx1-ubyte.gz", Gzip(IdxLabelsFile(2))}});
  absl::StatusOr<IdxDataset> test = LoadIdxSplit(dir, Split::kTest);
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(test->size(), 2);
}

TEST(LoadIdxSplitTest, CountMismatchNamesBothFiles) {
  const std::string dir =
      SplitDir("mismatch", {{"train-images-idx3-ubyte", IdxImagesFile(3, 2, 2)},
                            {"train-labels-idx1-ubyte", IdxLabelsFile(4)}});
  absl::Status s = LoadIdxSplit(dir, Split::kTrain).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              AllOf(HasSubstr(dir + "/train-images-idx3-ubyte has 3 images"),
                    HasSubstr(dir + "/train-labels-idx1-ubyte has 4 labels")));
}

TEST(LoadIdxSplitTest, EmptySplitRejected) {
  const std::string dir =
      SplitDir("empty", {{"train-images-idx3-ubyte", IdxImagesFile(0, 2, 2)},
                         {"train-labels-idx1-ubyte", IdxLabelsFile(0)}});
  EXPECT_THAT(std::string(LoadIdxSplit(dir, Split::kTrain).status().message()),
              HasSubstr("no samples"));
}

TEST(LoadIdxSplitTest, MissingFilesListNamesTried) {
  const std::string dir = SplitDir(
      "nolabels", {{"train-images-idx3-ubyte", IdxImagesFile(3, 2, 2)}});
  absl::Status s = LoadIdxSplit(dir, Split::kTrain).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()),
              AllOf(HasSubstr("no training labels"),
                    HasSubstr("train-labels-idx1-ubyte.gz")));
  EXPECT_THAT(std::string(LoadIdxSplit(dir, Split::kTest).status().message()),
              HasSubstr("no test images"));
}

TEST(LoadIdxSplitTest, BadDirectory) {
  EXPECT_EQ(
      LoadIdxSplit(TempPath("no-such-dir"), Split::kTrain).status().code(),
      absl::StatusCode::kNotFound);
  const std::string file = TempPath("a-file");
  WriteFile(file, "x");
  EXPECT_THAT(std::string(LoadIdxSplit(file, Split::kTrain).status().message()),
              HasSubstr("not a directory"));
}

TEST(LoadIdxSplitTest, ErrorsInsideFilesPropagate) {
  const std::string dir = SplitDir(
      "badlabels", {{"train-images-idx3-ubyte", IdxImagesFile(3, 2, 2)},
                    {"train-labels-idx1-ubyte", "garbage!"}});
  EXPECT_THAT(std::string(LoadIdxSplit(dir, Split::kTrain).status().message()),
              HasSubstr(dir + "/train-labels-idx1-ubyte: not an IDX label"));
}

void CheckRealSplit(Split split, int64_t expected) {
  absl::StatusOr<IdxDataset> data = LoadIdxSplit(kFashionMnistDir, split);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->size(), expected);
  EXPECT_EQ(data->images.rows, 28);
  EXPECT_EQ(data->images.cols, 28);
  std::vector<int64_t> per_class(256, 0);
  for (uint8_t label : data->labels) ++per_class[label];
  // Fashion-MNIST is balanced: a tenth of the samples in each class 0..9.
  for (int c = 0; c < 10; ++c) EXPECT_EQ(per_class[c], expected / 10) << c;
  for (int c = 10; c < 256; ++c) EXPECT_EQ(per_class[c], 0) << c;
}

TEST(LoadIdxSplitTest, RealFashionMnist) {
  struct stat st;
  if (::stat(kFashionMnistDir, &st) != 0) {
    GTEST_SKIP() << kFashionMnistDir
                 << " is missing: install the Debian package "
                    "dataset-fashion-mnist to run this test";
  }
  CheckRealSplit(Split::kTrain, 60000);
  CheckRealSplit(Split::kTest, 10000);
}

}  // namespace
}  // namespace ringleader
