#include "worker/data/token_dataset.h"

#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/data/gather_helper.h"
#include "tests/worker/data/npy_test_files.h"
#include "tests/worker/data/test_files.h"
#include "worker/data/dataset.h"
#include "worker/data/npy_header.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing_files::Gather;
using testing_files::Gathered;
using testing_files::NpyOf;
using testing_files::RawBytes;
using testing_files::WriteTemp;

// Tokens 100, 101, ..., 100 + n - 1, so a value names its position.
template <typename T>
std::vector<T> Ramp(int n) {
  std::vector<T> v(n);
  std::iota(v.begin(), v.end(), T{100});
  return v;
}

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

std::unique_ptr<TokenDataset> MustCreate(Split split, const std::string& path,
                                         int64_t block_size,
                                         NpyDtype raw = NpyDtype::kUint16) {
  absl::StatusOr<std::unique_ptr<TokenDataset>> ds =
      TokenDataset::Create(split, path, block_size, raw);
  EXPECT_TRUE(ds.ok()) << ds.status();
  return ds.ok() ? *std::move(ds) : nullptr;
}

// The input and target of one window, as token values.
struct Window {
  std::vector<int64_t> input;
  std::vector<int64_t> target;
};

Window GetWindow(const TokenDataset& ds, int64_t w) {
  const Gathered g = Gather(ds, {w});
  EXPECT_TRUE(g.status.ok()) << g.status;
  return {g.input<int64_t>(0), g.target<int64_t>()};
}

TEST(TokenDatasetTest, WindowsWhenNMinusOneDivides) {
  // N = 11, B = 5: windows [0, 6) and [5, 11); every token but the first is
  // a target once.
  const std::string path = WriteTemp("div.bin", RawBytes(Ramp<uint16_t>(11)));
  auto ds = MustCreate(Split::kTrain, path, 5);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_tokens(), 11);
  EXPECT_EQ(ds->size(), 2);
  EXPECT_THAT(ds->input_fields(),
              ElementsAre(FieldShape{ElementType::kInt64, {5}}));
  EXPECT_EQ(ds->target_field(), (FieldShape{ElementType::kInt64, {5}}));
  EXPECT_EQ(ds->num_classes(), 0);
  EXPECT_EQ(ds->Describe(), "train split of " + path);
  const Window first = GetWindow(*ds, 0);
  EXPECT_THAT(first.input, ElementsAreArray(Range(100, 105)));
  EXPECT_THAT(first.target, ElementsAreArray(Range(101, 106)));
  const Window last = GetWindow(*ds, 1);
  EXPECT_THAT(last.input, ElementsAreArray(Range(105, 110)));
  EXPECT_THAT(last.target, ElementsAreArray(Range(106, 111)));
}

TEST(TokenDatasetTest, TheTailThatFillsNoWindowIsUnused) {
  // N = 14, B = 5: (14 - 1) / 5 = 2 windows; tokens 11..13 are never read.
  const std::string path = WriteTemp("tail.bin", RawBytes(Ramp<uint16_t>(14)));
  auto ds = MustCreate(Split::kTrain, path, 5);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->size(), 2);
  EXPECT_THAT(GetWindow(*ds, 1).target, ElementsAreArray(Range(106, 111)));
  EXPECT_EQ(Gather(*ds, {2}).status.code(), absl::StatusCode::kOutOfRange);
}

TEST(TokenDatasetTest, BlockSizeOne) {
  const std::string path = WriteTemp("b1.bin", RawBytes(Ramp<uint16_t>(4)));
  auto ds = MustCreate(Split::kTrain, path, 1);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->size(), 3);
  const Gathered g = Gather(*ds, {2, 0, 1});
  ASSERT_TRUE(g.status.ok()) << g.status;
  EXPECT_THAT(g.input<int64_t>(0), ElementsAre(102, 100, 101));
  EXPECT_THAT(g.target<int64_t>(), ElementsAre(103, 101, 102));
}

TEST(TokenDatasetTest, SeveralWindowsInOneGather) {
  const std::string path = WriteTemp("many.bin", RawBytes(Ramp<uint16_t>(10)));
  auto ds = MustCreate(Split::kTrain, path, 3);
  ASSERT_NE(ds, nullptr);
  ASSERT_EQ(ds->size(), 3);
  const Gathered g = Gather(*ds, {2, 0});
  ASSERT_TRUE(g.status.ok()) << g.status;
  EXPECT_THAT(g.input<int64_t>(0), ElementsAre(106, 107, 108, 100, 101, 102));
  EXPECT_THAT(g.target<int64_t>(), ElementsAre(107, 108, 109, 101, 102, 103));
}

TEST(TokenDatasetTest, TrainNeedsOneWindowTestMayHaveNone) {
  const std::string five = WriteTemp("five.bin", RawBytes(Ramp<uint16_t>(5)));
  absl::Status s = TokenDataset::Create(Split::kTrain, five, 5).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "train split: " + five +
                             ": 5 tokens make no window: one window of "
                             "block_size 5 needs at least 6 tokens");
  auto test = MustCreate(Split::kTest, five, 5);
  ASSERT_NE(test, nullptr);
  EXPECT_EQ(test->size(), 0);

  const std::string empty = WriteTemp("empty.bin", "");
  s = TokenDataset::Create(Split::kTrain, empty, 4).status();
  EXPECT_THAT(std::string(s.message()), HasSubstr("0 tokens make no window"));
  auto empty_test = MustCreate(Split::kTest, empty, 4);
  ASSERT_NE(empty_test, nullptr);
  EXPECT_EQ(empty_test->size(), 0);
  EXPECT_TRUE(Gather(*empty_test, {}).status.ok());

  const std::string six = WriteTemp("six.bin", RawBytes(Ramp<uint16_t>(6)));
  auto one = MustCreate(Split::kTrain, six, 5);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->size(), 1);
  EXPECT_THAT(GetWindow(*one, 0).target, ElementsAreArray(Range(101, 106)));
}

TEST(TokenDatasetTest, BlockSizeMustBePositive) {
  const std::string path = WriteTemp("bs.bin", RawBytes(Ramp<uint16_t>(8)));
  for (int64_t b : {int64_t{0}, int64_t{-3}, (int64_t{1} << 30) + 1}) {
    const absl::Status s = TokenDataset::Create(Split::kTest, path, b).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << b;
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("block_size must be in [1, "));
  }
}

TEST(TokenDatasetTest, RawUint32) {
  const std::vector<uint32_t> tokens = {70000, 4000000000u, 1, 2, 3};
  const std::string path = WriteTemp("u32.bin", RawBytes(tokens));
  auto ds = MustCreate(Split::kTrain, path, 2, NpyDtype::kUint32);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->size(), 2);
  EXPECT_EQ(ds->dtype(), NpyDtype::kUint32);
  const Window w = GetWindow(*ds, 0);
  EXPECT_THAT(w.input, ElementsAre(70000, 4000000000LL));
  EXPECT_THAT(w.target, ElementsAre(4000000000LL, 1));
}

TEST(TokenDatasetTest, RawSizeNotAWholeNumberOfTokensIsDataLoss) {
  const std::string odd = WriteTemp("odd.bin", std::string(7, '\0'));
  absl::Status s = TokenDataset::Create(Split::kTest, odd, 2).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "test split: " + odd +
                             ": 7 bytes is not a whole number of uint16 tokens "
                             "(2 bytes each): truncated?");
  const std::string six = WriteTemp("six-bytes.bin", std::string(6, '\0'));
  s = TokenDataset::Create(Split::kTest, six, 2, NpyDtype::kUint32).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  s = TokenDataset::Create(Split::kTest, six, 2, NpyDtype::kFloat32).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

TEST(TokenDatasetTest, RawFileThatIsReallyANpyIsRefused) {
  const std::string path = WriteTemp(
      "misnamed.bin", NpyOf(NpyDtype::kUint16, {8}, Ramp<uint16_t>(8)));
  const absl::Status s = TokenDataset::Create(Split::kTrain, path, 2).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("name it *.npy"));
}

template <typename T>
void CheckNpyTokens(NpyDtype dtype, const std::string& name) {
  SCOPED_TRACE(name);
  const std::string path = WriteTemp(name, NpyOf(dtype, {9}, Ramp<T>(9)));
  auto ds = MustCreate(Split::kTrain, path, 4);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->dtype(), dtype);
  EXPECT_EQ(ds->size(), 2);
  const Window w = GetWindow(*ds, 1);
  EXPECT_THAT(w.input, ElementsAreArray(Range(104, 108)));
  EXPECT_THAT(w.target, ElementsAreArray(Range(105, 109)));
}

TEST(TokenDatasetTest, NpyOfEveryTokenDtype) {
  CheckNpyTokens<uint16_t>(NpyDtype::kUint16, "t-u2.npy");
  CheckNpyTokens<int32_t>(NpyDtype::kInt32, "t-i4.npy");
  CheckNpyTokens<uint32_t>(NpyDtype::kUint32, "t-u4.npy");
  CheckNpyTokens<int64_t>(NpyDtype::kInt64, "t-i8.npy");
}

TEST(TokenDatasetTest, NpyMustBeOneDimensionalIds) {
  const std::string two_d = WriteTemp(
      "t-2d.npy", NpyOf(NpyDtype::kUint16, {2, 4}, Ramp<uint16_t>(8)));
  absl::Status s = TokenDataset::Create(Split::kTrain, two_d, 2).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("must be 1-D"));
  const std::string floats = WriteTemp(
      "t-f4.npy", NpyOf<float>(NpyDtype::kFloat32, {4}, {1, 2, 3, 4}));
  s = TokenDataset::Create(Split::kTrain, floats, 2).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("token ids must be uint16, int32, "
                        "uint32 or int64, got float32"));
  const std::string cut = WriteTemp(
      "t-cut.npy",
      testing_files::NpyBytes(NpyDtype::kUint16, {8}, std::string(10, '\0')));
  s = TokenDataset::Create(Split::kTest, cut, 2).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("test split: " + cut + ": truncated"));
}

TEST(TokenDatasetTest, NegativeIdsNameFileAndPosition) {
  // B = 3; token 3 is -3: the last target of window 0, an input of window 1.
  const std::string path =
      WriteTemp("t-neg.npy",
                NpyOf<int32_t>(NpyDtype::kInt32, {7}, {0, 1, 2, -3, 4, 5, 6}));
  auto ds = MustCreate(Split::kTrain, path, 3);
  ASSERT_NE(ds, nullptr);
  Gathered g = Gather(*ds, {0});
  EXPECT_EQ(g.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.status.message(),
            "train split of " + path +
                ": token 3 (in window 0) is -3; token ids must be >= 0");
  g = Gather(*ds, {1});
  EXPECT_THAT(std::string(g.status.message()),
              HasSubstr("token 3 (in window 1) is -3"));
  const std::string first = WriteTemp(
      "t-neg0.npy", NpyOf<int64_t>(NpyDtype::kInt64, {3}, {-1, 1, 2}));
  auto ds0 = MustCreate(Split::kTrain, first, 2);
  ASSERT_NE(ds0, nullptr);
  EXPECT_THAT(std::string(Gather(*ds0, {0}).status.message()),
              HasSubstr("token 0 (in window 0) is -1"));
}

TEST(TokenDatasetTest, IdsPastTheVocabularyNamePositionAndSize) {
  // 100, 101, ...: B = 3, so token 5 (value 105) is an input of window 1
  // and token 6 (106) the last target of window 1 and an input of window 2.
  const std::string path = WriteTemp("vocab.bin", RawBytes(Ramp<uint16_t>(10)));
  auto ds = MustCreate(Split::kTrain, path, 3);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->vocabulary_limit(), 0);
  EXPECT_TRUE(Gather(*ds, {0, 1, 2}).status.ok());  // No limit yet.
  ds->LimitVocabulary(105);
  EXPECT_TRUE(Gather(*ds, {0}).status.ok());  // Tokens 100..103.
  Gathered g = Gather(*ds, {1});
  EXPECT_EQ(g.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.status.message(),
            "train split of " + path +
                ": token id 105 at position 5 is >= the model's vocabulary "
                "size 105");
  ds->LimitVocabulary(106);  // Now only the last target of window 1.
  EXPECT_THAT(std::string(Gather(*ds, {1}).status.message()),
              HasSubstr("token id 106 at position 6 is >="));
  ds->LimitVocabulary(0);
  EXPECT_TRUE(Gather(*ds, {1, 2}).status.ok());
  // A signed file: a negative id is still named as one, under a limit too.
  const std::string neg = WriteTemp(
      "vocab-neg.npy", NpyOf<int64_t>(NpyDtype::kInt64, {4}, {1, -2, 3, 4}));
  auto signed_ds = MustCreate(Split::kTest, neg, 3);
  ASSERT_NE(signed_ds, nullptr);
  signed_ds->LimitVocabulary(3);
  EXPECT_THAT(std::string(Gather(*signed_ds, {0}).status.message()),
              HasSubstr("token 1 (in window 0) is -2; token ids must be >= 0"));
}

TEST(TokenDatasetTest, BadIndicesAndBuffers) {
  const std::string path = WriteTemp("idx.bin", RawBytes(Ramp<uint16_t>(9)));
  auto ds = MustCreate(Split::kTrain, path, 4);
  ASSERT_NE(ds, nullptr);
  for (int64_t bad : {int64_t{-1}, int64_t{2}, int64_t{1} << 62}) {
    const Gathered g = Gather(*ds, {0, bad});
    EXPECT_EQ(g.status.code(), absl::StatusCode::kOutOfRange) << bad;
    EXPECT_THAT(std::string(g.status.message()), StartsWith(ds->Describe()));
  }
  int64_t out[8];
  const int64_t index = 0;
  EXPECT_EQ(ds->GatherFields(&index, 1, {}, out).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TokenDatasetTest, MissingFileNamesSplitAndPath) {
  const std::string path = testing_files::TempPath("no-such-tokens.bin");
  const absl::Status s = TokenDataset::Create(Split::kTest, path, 4).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), StartsWith("test split: " + path));
}

}  // namespace
}  // namespace ringleader
