#include "worker/data/npy_dataset.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
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
#include "worker/data/input_transform.h"
#include "worker/data/npy_header.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing_files::Gather;
using testing_files::Gathered;
using testing_files::NpyBytes;
using testing_files::NpyOf;
using testing_files::NpyWithDict;
using testing_files::RawBytes;
using testing_files::WriteTemp;

constexpr float kTol = 1e-6f;

std::unique_ptr<NpyDataset> MustCreate(
    Split split, const std::vector<std::string>& inputs,
    const std::string& targets, const InputTransformSpec& transform = {}) {
  absl::StatusOr<std::unique_ptr<NpyDataset>> ds =
      NpyDataset::Create(split, inputs, targets, transform);
  EXPECT_TRUE(ds.ok()) << ds.status();
  return ds.ok() ? *std::move(ds) : nullptr;
}

absl::Status CreateError(Split split, const std::vector<std::string>& inputs,
                         const std::string& targets,
                         const InputTransformSpec& transform = {}) {
  return NpyDataset::Create(split, inputs, targets, transform).status();
}

// Three class ids, for tests about the inputs.
std::string ThreeTargets(const std::string& name) {
  return WriteTemp(name, NpyOf<int64_t>(NpyDtype::kInt64, {3}, {0, 1, 2}));
}

// A [3, 2] input of `values` (row-major); gathers rows 2 and 0.
template <typename T>
Gathered GatherRows20(const std::string& name, NpyDtype dtype,
                      const std::vector<T>& values, FieldShape expected) {
  const std::string x = WriteTemp(name + ".npy", NpyOf(dtype, {3, 2}, values));
  auto ds = MustCreate(Split::kTrain, {x}, ThreeTargets(name + "-y.npy"));
  if (ds == nullptr) return {};
  EXPECT_EQ(ds->size(), 3);
  EXPECT_THAT(ds->input_fields(), ElementsAre(expected));
  Gathered g = Gather(*ds, {2, 0});
  EXPECT_TRUE(g.status.ok()) << g.status;
  return g;
}

const FieldShape kInt64Pair{ElementType::kInt64, {2}};
const FieldShape kFloatPair{ElementType::kFloat32, {2}};

TEST(NpyDatasetTest, IntegerInputsBecomeInt64) {
  EXPECT_THAT((GatherRows20<uint8_t>("u1", NpyDtype::kUint8,
                                     {0, 1, 2, 3, 254, 255}, kInt64Pair)
                   .input<int64_t>(0)),
              ElementsAre(254, 255, 0, 1));
  EXPECT_THAT((GatherRows20<int8_t>("i1", NpyDtype::kInt8,
                                    {-1, 1, 2, 3, -128, 127}, kInt64Pair)
                   .input<int64_t>(0)),
              ElementsAre(-128, 127, -1, 1));
  EXPECT_THAT((GatherRows20<uint16_t>("u2", NpyDtype::kUint16,
                                      {1, 2, 3, 4, 65535, 6}, kInt64Pair)
                   .input<int64_t>(0)),
              ElementsAre(65535, 6, 1, 2));
  EXPECT_THAT((GatherRows20<int16_t>("i2", NpyDtype::kInt16,
                                     {1, 2, 3, 4, -32768, 6}, kInt64Pair)
                   .input<int64_t>(0)),
              ElementsAre(-32768, 6, 1, 2));
  EXPECT_THAT((GatherRows20<uint32_t>("u4", NpyDtype::kUint32,
                                      {1, 2, 3, 4, 4294967295u, 6}, kInt64Pair)
                   .input<int64_t>(0)),
              ElementsAre(4294967295LL, 6, 1, 2));
  EXPECT_THAT((GatherRows20<int32_t>("i4", NpyDtype::kInt32,
                                     {-7, 2, 3, 4, 5, -100}, kInt64Pair)
                   .input<int64_t>(0)),
              ElementsAre(5, -100, -7, 2));
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_THAT((GatherRows20<int64_t>("i8", NpyDtype::kInt64,
                                     {1, 2, 3, 4, big, -big}, kInt64Pair)
                   .input<int64_t>(0)),
              ElementsAre(big, -big, 1, 2));
}

TEST(NpyDatasetTest, FloatInputsBecomeFloat32) {
  EXPECT_THAT((GatherRows20<float>("f4", NpyDtype::kFloat32,
                                   {0.5f, 1, 2, 3, -4.25f, 1e30f}, kFloatPair)
                   .input<float>(0)),
              ElementsAre(-4.25f, 1e30f, 0.5f, 1.0f));
  EXPECT_THAT(
      (GatherRows20<double>("f8", NpyDtype::kFloat64,
                            {0.1, 1, 2, 3, -2.5, 1e300}, kFloatPair)
           .input<float>(0)),
      ElementsAre(-2.5f, std::numeric_limits<float>::infinity(), 0.1f, 1.0f));
  // float16: 1, -2 | 0, 0 | 2^-24 (subnormal), -inf.
  const std::vector<float> half =
      GatherRows20<uint16_t>("f2", NpyDtype::kFloat16,
                             {0x3c00, 0xc000, 0, 0, 0x0001, 0xfc00}, kFloatPair)
          .input<float>(0);
  EXPECT_THAT(
      half, ElementsAre(std::ldexp(1.0f, -24),
                        -std::numeric_limits<float>::infinity(), 1.0f, -2.0f));
}

TEST(NpyDatasetTest, SeveralInputsAndClassTargets) {
  const std::string a =
      WriteTemp("multi-a.npy",
                NpyOf<float>(NpyDtype::kFloat32, {4, 3},
                             {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32}));
  const std::string b =
      WriteTemp("multi-b.npy",
                NpyOf<int64_t>(NpyDtype::kInt64, {4}, {100, 101, 102, 103}));
  const std::string y = WriteTemp(
      "multi-y.npy", NpyOf<uint8_t>(NpyDtype::kUint8, {4}, {3, 1, 0, 2}));
  auto ds = MustCreate(Split::kTest, {a, b}, y);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->Describe(), "test split of " + a + ", " + b + ", " + y);
  EXPECT_THAT(ds->input_fields(),
              ElementsAre(FieldShape{ElementType::kFloat32, {3}},
                          FieldShape{ElementType::kInt64, {}}));
  EXPECT_EQ(ds->target_field(), (FieldShape{ElementType::kInt64, {}}));
  EXPECT_EQ(ds->num_classes(), 4);
  EXPECT_EQ(ds->min_target(), 0);
  const Gathered g = Gather(*ds, {3, 1, 3});
  ASSERT_TRUE(g.status.ok()) << g.status;
  EXPECT_THAT(g.input<float>(0),
              ElementsAre(30, 31, 32, 10, 11, 12, 30, 31, 32));
  EXPECT_THAT(g.input<int64_t>(1), ElementsAre(103, 101, 103));
  EXPECT_THAT(g.target<int64_t>(), ElementsAre(2, 1, 2));
}

TEST(NpyDatasetTest, PerPositionTargetsWithIgnoredEntries) {
  const std::string x =
      WriteTemp("pos-x.npy",
                NpyOf<int32_t>(NpyDtype::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  const std::string y = WriteTemp(
      "pos-y.npy",
      NpyOf<int32_t>(NpyDtype::kInt32, {2, 3}, {7, -100, 2, -100, 41, 0}));
  auto ds = MustCreate(Split::kTrain, {x}, y);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->target_field(), (FieldShape{ElementType::kInt64, {3}}));
  EXPECT_EQ(ds->num_classes(), 42);
  EXPECT_EQ(ds->min_target(), -100);
  EXPECT_EQ(ds->max_target(), 41);
  const Gathered g = Gather(*ds, {1});
  ASSERT_TRUE(g.status.ok()) << g.status;
  EXPECT_THAT(g.target<int64_t>(), ElementsAre(-100, 41, 0));
}

TEST(NpyDatasetTest, AllTargetsNegativeShowNoClasses) {
  const std::string x =
      WriteTemp("neg-x.npy", NpyOf<uint8_t>(NpyDtype::kUint8, {2}, {1, 2}));
  const std::string y = WriteTemp(
      "neg-y.npy", NpyOf<int64_t>(NpyDtype::kInt64, {2}, {-100, -100}));
  auto ds = MustCreate(Split::kTrain, {x}, y);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_classes(), 0);
}

TEST(NpyDatasetTest, FloatTargetsAreRegressionValues) {
  const std::string x =
      WriteTemp("reg-x.npy", NpyOf<uint8_t>(NpyDtype::kUint8, {2}, {1, 2}));
  const std::string y = WriteTemp(
      "reg-y.npy",
      NpyOf<uint16_t>(NpyDtype::kFloat16, {2, 2}, {0x3c00, 0x3800, 0xc000, 0}));
  auto ds = MustCreate(Split::kTrain, {x}, y);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->target_field(), (FieldShape{ElementType::kFloat32, {2}}));
  EXPECT_EQ(ds->num_classes(), 0);
  const Gathered g = Gather(*ds, {1, 0});
  ASSERT_TRUE(g.status.ok()) << g.status;
  EXPECT_THAT(g.target<float>(), ElementsAre(-2.0f, 0.0f, 1.0f, 0.5f));
}

// ToTensor + Normalize on [N, 3, 1, 2] uint8 images, and the same transform
// on a second, int32 input of 3 channels; every input becomes float32.
TEST(NpyDatasetTest, TransformMathMatchesHandComputedValues) {
  const std::string img = WriteTemp(
      "tf-img.npy",
      NpyOf<uint8_t>(NpyDtype::kUint8, {2, 3, 1, 2},
                     {0, 255, 51, 102, 153, 204, 255, 0, 0, 255, 102, 51}));
  const std::string aux = WriteTemp(
      "tf-aux.npy",
      NpyOf<int32_t>(NpyDtype::kInt32, {2, 3}, {0, 0, 0, 255, 51, -255}));
  const std::string y =
      WriteTemp("tf-y.npy", NpyOf<uint8_t>(NpyDtype::kUint8, {2}, {0, 1}));
  const InputTransformSpec t{1.0 / 255, {0.5, 0.2, 0.6}, {0.5, 0.4, 0.2}};
  auto ds = MustCreate(Split::kTrain, {img, aux}, y, t);
  ASSERT_NE(ds, nullptr);
  EXPECT_THAT(ds->input_fields(),
              ElementsAre(FieldShape{ElementType::kFloat32, {3, 1, 2}},
                          FieldShape{ElementType::kFloat32, {3}}));
  const Gathered g = Gather(*ds, {1});
  ASSERT_TRUE(g.status.ok()) << g.status;
  // Sample 1: channel 0 = 255, 0; channel 1 = 0, 255; channel 2 = 102, 51.
  // (x / 255 - mean[c]) / std[c].
  EXPECT_THAT(g.input<float>(0),
              ElementsAre(FloatNear(1.0f, kTol), FloatNear(-1.0f, kTol),
                          FloatNear(-0.5f, kTol), FloatNear(2.0f, kTol),
                          FloatNear(-1.0f, kTol), FloatNear(-2.0f, kTol)));
  // aux sample 1: 255, 51, -255.
  EXPECT_THAT(g.input<float>(1),
              ElementsAre(FloatNear(1.0f, kTol), FloatNear(0.0f, kTol),
                          FloatNear(-8.0f, kTol)));
}

TEST(NpyDatasetTest, TransformThatDoesNotFitNamesSplitAndInput) {
  const std::string x =
      WriteTemp("misfit-x.npy",
                NpyOf<uint8_t>(NpyDtype::kUint8, {2, 1, 2}, {1, 2, 3, 4}));
  const std::string y =
      WriteTemp("misfit-y.npy", NpyOf<uint8_t>(NpyDtype::kUint8, {2}, {0, 1}));
  const absl::Status s = CreateError(Split::kTrain, {x}, y,
                                     {1.0 / 255, {0.5, 0.5, 0.5}, {1, 1, 1}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), StartsWith("train split: "));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("input 0 (" + x + ") has 1 channel ("));
}

TEST(NpyDatasetTest, MismatchedSampleCountsNameTheFile) {
  const std::string a = WriteTemp(
      "count-a.npy", NpyOf<uint8_t>(NpyDtype::kUint8, {5}, {1, 2, 3, 4, 5}));
  const std::string b = WriteTemp(
      "count-b.npy", NpyOf<uint8_t>(NpyDtype::kUint8, {4}, {1, 2, 3, 4}));
  const std::string y = WriteTemp(
      "count-y.npy", NpyOf<uint8_t>(NpyDtype::kUint8, {5}, {0, 0, 0, 0, 0}));
  absl::Status s = CreateError(Split::kTrain, {a, b}, y);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("train split: " + b + " has 4 samples"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("but " + a + " has 5"));
  s = CreateError(Split::kTest, {b}, y);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("test split: " + y + " has 5 samples"));
}

TEST(NpyDatasetTest, ScalarFilesHaveNoSamples) {
  const std::string x =
      WriteTemp("scalar-x.npy", NpyOf<float>(NpyDtype::kFloat32, {}, {1.0f}));
  const std::string y =
      WriteTemp("scalar-y.npy", NpyOf<uint8_t>(NpyDtype::kUint8, {1}, {0}));
  const absl::Status s = CreateError(Split::kTrain, {x}, y);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr(x + ": a 0-d array"));
  EXPECT_FALSE(CreateError(Split::kTrain, {y}, x).ok());
}

TEST(NpyDatasetTest, MissingAndBrokenFilesNameSplitAndFile) {
  const std::string y =
      WriteTemp("files-y.npy", NpyOf<uint8_t>(NpyDtype::kUint8, {1}, {0}));
  absl::Status s = CreateError(Split::kTrain, {}, y);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "train split: no input files");
  s = CreateError(Split::kTrain, {y}, "");
  EXPECT_EQ(s.message(), "train split: no targets file");
  const std::string missing = testing_files::TempPath("no-such.npy");
  s = CreateError(Split::kTest, {missing}, y);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), StartsWith("test split: " + missing));
  const std::string cut =
      WriteTemp("files-cut.npy",
                NpyBytes(NpyDtype::kFloat32, {1, 4}, std::string(12, 'x')));
  s = CreateError(Split::kTest, {cut}, y);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("test split: " + cut + ": truncated"));
  const std::string fortran = WriteTemp(
      "files-fortran.npy",
      NpyWithDict("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }",
                  std::string(8, '\0')));
  s = CreateError(Split::kTrain, {fortran}, y);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("np.ascontiguousarray"));
}

TEST(NpyDatasetTest, OnlyTheTrainSplitNeedsSamples) {
  const std::string x =
      WriteTemp("none-x.npy", NpyBytes(NpyDtype::kFloat32, {0, 5}, ""));
  const std::string y =
      WriteTemp("none-y.npy", NpyBytes(NpyDtype::kInt64, {0}, ""));
  const absl::Status s = CreateError(Split::kTrain, {x}, y);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("no samples"));
  auto test = MustCreate(Split::kTest, {x}, y);
  ASSERT_NE(test, nullptr);
  EXPECT_EQ(test->size(), 0);
  EXPECT_EQ(test->num_classes(), 0);
  EXPECT_THAT(test->input_fields(),
              ElementsAre(FieldShape{ElementType::kFloat32, {5}}));
  EXPECT_TRUE(Gather(*test, {}).status.ok());
}

TEST(NpyDatasetTest, OutOfRangeIndicesAndWrongBuffers) {
  const std::string x = WriteTemp(
      "range-x.npy", NpyOf<uint8_t>(NpyDtype::kUint8, {3}, {1, 2, 3}));
  auto ds = MustCreate(Split::kTrain, {x}, ThreeTargets("range-y.npy"));
  ASSERT_NE(ds, nullptr);
  for (const std::vector<int64_t>& bad :
       {std::vector<int64_t>{0, 3}, std::vector<int64_t>{-1},
        std::vector<int64_t>{std::numeric_limits<int64_t>::max()}}) {
    const Gathered g = Gather(*ds, bad);
    EXPECT_EQ(g.status.code(), absl::StatusCode::kOutOfRange);
    EXPECT_THAT(std::string(g.status.message()), StartsWith(ds->Describe()));
  }
  int64_t out[2];
  const int64_t index = 0;
  const absl::Status s = ds->GatherFields(&index, 1, {out, out}, out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

// A header dict padded so that the data starts at 3 mod 8: misaligned for
// every multi-byte type.
std::string MisalignedDict(std::string dict) {
  while ((10 + dict.size() + 1) % 8 != 3) dict += ' ';
  return dict + "\n";
}

// Data at an odd offset (a hand-padded header): rows are read through
// unaligned loads, with the same values.
TEST(NpyDatasetTest, UnalignedDataReadsTheSameValues) {
  const std::string x = WriteTemp(
      "odd-x.npy",
      NpyWithDict(MisalignedDict("{'descr': '<f4', 'fortran_order': False, "
                                 "'shape': (2, 2), }"),
                  RawBytes<float>({1.5f, -2.0f, 3.25f, 4e-3f})));
  const std::string y = WriteTemp(
      "odd-y.npy",
      NpyWithDict(MisalignedDict("{'descr': '<i8', 'fortran_order': False, "
                                 "'shape': (2,), }"),
                  RawBytes<int64_t>({-5, 1LL << 40})));
  auto ds = MustCreate(Split::kTrain, {x}, y);
  ASSERT_NE(ds, nullptr);
  const Gathered g = Gather(*ds, {1, 0});
  ASSERT_TRUE(g.status.ok()) << g.status;
  EXPECT_THAT(g.input<float>(0), ElementsAre(3.25f, 4e-3f, 1.5f, -2.0f));
  EXPECT_THAT(g.target<int64_t>(), ElementsAre(1LL << 40, -5));
}

long PageFaults() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt + usage.ru_majflt;
}

// A 64 GiB input that is all hole but two rows: creating the dataset and
// gathering those rows must fault in only their pages (and the targets'),
// not the file. Reading it whole would be 16 million page faults.
TEST(NpyDatasetTest, GatherTouchesOnlyTheRowsAskedFor) {
  constexpr int64_t kRows = 1 << 16;
  constexpr int64_t kRowBytes = 1 << 20;
  const std::string x = testing_files::TempPath("sparse-x.npy");
  const std::string header =
      FormatNpyHeader(NpyDtype::kUint8, {kRows, kRowBytes});
  const int fd = open(x.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  if (ftruncate(fd, header.size() + kRows * kRowBytes) != 0) {
    close(fd);
    GTEST_SKIP() << "the test's file system holds no 64 GiB sparse file";
  }
  ASSERT_EQ(pwrite(fd, header.data(), header.size(), 0),
            static_cast<ssize_t>(header.size()));
  const std::string row7(kRowBytes, '\x07');
  const std::string row60000(kRowBytes, '\xff');
  ASSERT_EQ(pwrite(fd, row7.data(), kRowBytes, header.size() + 7 * kRowBytes),
            kRowBytes);
  ASSERT_EQ(
      pwrite(fd, row60000.data(), kRowBytes, header.size() + 60000 * kRowBytes),
      kRowBytes);
  close(fd);
  std::vector<int64_t> labels(kRows);
  for (int64_t i = 0; i < kRows; ++i) labels[i] = i % 10;
  const std::string y =
      WriteTemp("sparse-y.npy", NpyOf(NpyDtype::kInt64, {kRows}, labels));

  const long before = PageFaults();
  auto ds = MustCreate(Split::kTrain, {x}, y, {1.0 / 255, {}, {}});
  ASSERT_NE(ds, nullptr);
  const Gathered g = Gather(*ds, {60000, 7});
  const long faults = PageFaults() - before;
  ASSERT_TRUE(g.status.ok()) << g.status;
  const std::vector<float> pixels = g.input<float>(0);
  ASSERT_EQ(pixels.size(), 2u * kRowBytes);
  EXPECT_EQ(pixels[0], 1.0f);
  EXPECT_EQ(pixels[kRowBytes - 1], 1.0f);
  EXPECT_THAT(pixels[kRowBytes], FloatNear(7.0f / 255, kTol));
  EXPECT_THAT(g.target<int64_t>(), ElementsAre(0, 7));
  EXPECT_EQ(ds->num_classes(), 10);
  // The rows (512 pages), the targets (128), the output (2048) and
  // allocations: a few thousand, bounded well below reading the file.
  RecordProperty("page_faults", static_cast<int>(faults));
  EXPECT_LT(faults, 50000) << "page faults";
}

}  // namespace
}  // namespace ringleader
