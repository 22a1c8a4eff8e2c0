#include "worker/data/job_data.h"

#include <unistd.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringleader/v1/job.pb.h"
#include "tests/worker/data/gather_helper.h"
#include "tests/worker/data/npy_test_files.h"
#include "tests/worker/data/test_files.h"
#include "worker/data/dataset.h"
#include "worker/data/npy_header.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing_files::Gather;
using testing_files::Gathered;
using testing_files::NpyOf;
using testing_files::RawBytes;
using testing_files::WriteTemp;

// An NPY spec over x [n, width] float32 (x[i][j] = 10 i + j) and y [n]
// uint8 (i % 3), written under `prefix`.
void AddNpySplit(v1::NpySplit* split, const std::string& prefix, int n,
                 int width) {
  std::vector<float> x;
  std::vector<uint8_t> y;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < width; ++j) x.push_back(10.0f * i + j);
    y.push_back(static_cast<uint8_t>(i % 3));
  }
  split->add_inputs(
      WriteTemp(prefix + "-x.npy", NpyOf(NpyDtype::kFloat32, {n, width}, x)));
  split->set_targets(
      WriteTemp(prefix + "-y.npy", NpyOf(NpyDtype::kUint8, {n}, y)));
}

v1::DatasetSpec NpySpec(const std::string& name, int test_width = 2) {
  v1::DatasetSpec spec;
  spec.set_format(v1::DATASET_FORMAT_NPY);
  AddNpySplit(spec.mutable_train(), name + "-train", 4, 2);
  if (test_width > 0)
    AddNpySplit(spec.mutable_test(), name + "-test", 2, test_width);
  return spec;
}

TEST(JobDataTest, NpyTrainAndTestWithTheTransform) {
  v1::DatasetSpec spec = NpySpec("both");
  spec.mutable_transform()->set_scale(2);
  absl::StatusOr<JobData> data = LoadJobData(spec, 1);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->train->size(), 4);
  EXPECT_EQ(data->test->size(), 2);
  EXPECT_EQ(data->train->num_classes(), 3);
  EXPECT_THAT(data->test->input_fields(),
              ElementsAre(FieldShape{ElementType::kFloat32, {2}}));
  EXPECT_THAT(data->train->Describe(), StartsWith("train split of "));
  EXPECT_THAT(data->test->Describe(), StartsWith("test split of "));
  const Gathered g = Gather(*data->test, {1});
  ASSERT_TRUE(g.status.ok()) << g.status;
  EXPECT_THAT(g.input<float>(0), ElementsAre(20.0f, 22.0f));
  EXPECT_THAT(g.target<int64_t>(), ElementsAre(1));
}

TEST(JobDataTest, NpyWithoutATestSplit) {
  absl::StatusOr<JobData> data = LoadJobData(NpySpec("notest", 0), 1);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->test->size(), 0);
  EXPECT_EQ(data->test->input_fields(), data->train->input_fields());
  EXPECT_EQ(data->test->target_field(), data->train->target_field());
  EXPECT_EQ(data->test->Describe(), "test split (none given)");
  EXPECT_TRUE(Gather(*data->test, {}).status.ok());
}

TEST(JobDataTest, NpyTestFieldsMustMatchTrain) {
  const absl::Status s = LoadJobData(NpySpec("misfit", 3), 1).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("input 0 is float32 [3] in the test split of "));
  EXPECT_THAT(std::string(s.message()), HasSubstr("but float32 [2] in the "
                                                  "train split of "));
}

TEST(JobDataTest, NpyHalfGivenTestSplitIsAnError) {
  v1::DatasetSpec spec = NpySpec("half");
  spec.mutable_test()->clear_targets();
  const absl::Status s = LoadJobData(spec, 1).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "test split: no targets file");
}

TEST(JobDataTest, NpyErrorsNameTheSplitAndFile) {
  v1::DatasetSpec spec = NpySpec("missing");
  const std::string gone = testing_files::TempPath("gone.npy");
  spec.mutable_train()->set_inputs(0, gone);
  absl::Status s = LoadJobData(spec, 1).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), StartsWith("train split: " + gone));
  spec = NpySpec("badmean");
  spec.mutable_transform()->add_mean(0.5);
  spec.mutable_transform()->add_std(0);
  s = LoadJobData(spec, 1).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("train split: transform.std[0] must be"));
}

v1::DatasetSpec TokenSpec(const std::string& train, const std::string& test,
                          int block_size) {
  v1::DatasetSpec spec;
  spec.set_format(v1::DATASET_FORMAT_TOKENS);
  spec.set_train_tokens(train);
  spec.set_test_tokens(test);
  spec.set_block_size(block_size);
  return spec;
}

TEST(JobDataTest, TokensTrainAndTest) {
  const std::string train = WriteTemp(
      "tok-train.bin", RawBytes<uint16_t>({1, 2, 3, 4, 5, 6, 7, 8, 9}));
  const std::string test = WriteTemp(
      "tok-test.npy", NpyOf<int32_t>(NpyDtype::kInt32, {5}, {9, 8, 7, 6, 5}));
  absl::StatusOr<JobData> data = LoadJobData(TokenSpec(train, test, 4), 1);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->train->size(), 2);
  EXPECT_EQ(data->test->size(), 1);
  EXPECT_EQ(data->train->num_classes(), 0);
  EXPECT_EQ(data->test->input_fields(), data->train->input_fields());
  const Gathered g = Gather(*data->test, {0});
  ASSERT_TRUE(g.status.ok()) << g.status;
  EXPECT_THAT(g.input<int64_t>(0), ElementsAre(9, 8, 7, 6));
  EXPECT_THAT(g.target<int64_t>(), ElementsAre(8, 7, 6, 5));
}

TEST(JobDataTest, TokensOfUint32WithoutATestSplit) {
  const std::string train =
      WriteTemp("tok32.bin", RawBytes<uint32_t>({100000, 100001, 100002}));
  v1::DatasetSpec spec = TokenSpec(train, "", 2);
  spec.set_token_dtype(v1::TOKEN_DTYPE_UINT32);
  absl::StatusOr<JobData> data = LoadJobData(spec, 1);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->train->size(), 1);
  EXPECT_EQ(data->test->size(), 0);
  EXPECT_THAT(data->test->input_fields(),
              ElementsAre(FieldShape{ElementType::kInt64, {2}}));
  const Gathered g = Gather(*data->train, {0});
  ASSERT_TRUE(g.status.ok()) << g.status;
  EXPECT_THAT(g.target<int64_t>(), ElementsAre(100001, 100002));
}

TEST(JobDataTest, TokenErrors) {
  absl::Status s = LoadJobData(TokenSpec("", "", 4), 1).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("dataset.train_tokens"));
  const std::string train =
      WriteTemp("tok-few.bin", RawBytes<uint16_t>({1, 2, 3}));
  s = LoadJobData(TokenSpec(train, "", 0), 1).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("block_size"));
  s = LoadJobData(TokenSpec(train, "", 3), 1).status();
  EXPECT_THAT(std::string(s.message()), HasSubstr("needs at least 4 tokens"));
  const std::string cut = WriteTemp("tok-cut.bin", "abc");
  s = LoadJobData(TokenSpec(train, cut, 2), 1).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), StartsWith("test split: " + cut));
}

// Relative paths are the worker's: resolved against its working directory.
TEST(JobDataTest, RelativePathsAreFromTheWorkingDirectory) {
  char old_cwd[PATH_MAX];
  ASSERT_NE(getcwd(old_cwd, sizeof(old_cwd)), nullptr);
  const std::string dir = testing_files::TempDir("cwd");
  testing_files::WriteFile(dir + "/x.npy",
                           NpyOf<uint8_t>(NpyDtype::kUint8, {2}, {4, 5}));
  testing_files::WriteFile(dir + "/y.npy",
                           NpyOf<uint8_t>(NpyDtype::kUint8, {2}, {0, 1}));
  testing_files::WriteFile(dir + "/t.bin", RawBytes<uint16_t>({1, 2, 3}));
  ASSERT_EQ(chdir(dir.c_str()), 0);
  v1::DatasetSpec npy;
  npy.set_format(v1::DATASET_FORMAT_NPY);
  npy.mutable_train()->add_inputs("x.npy");
  npy.mutable_train()->set_targets("./y.npy");
  absl::StatusOr<JobData> a = LoadJobData(npy, 1);
  absl::StatusOr<JobData> b = LoadJobData(TokenSpec("t.bin", "", 1), 1);
  ASSERT_EQ(chdir(old_cwd), 0);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->train->Describe(), "train split of x.npy, ./y.npy");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->train->size(), 2);
}

TEST(JobDataTest, IdxAndSyntheticAsBefore) {
  const std::string dir = testing_files::TempDir("idx");
  for (const char* prefix : {"train", "t10k"}) {
    testing_files::WriteFile(
        dir + "/" + prefix + "-images-idx3-ubyte",
        testing_files::IdxImagesFile(prefix[1] == 'r' ? 6 : 3, 28, 28));
    testing_files::WriteFile(
        dir + "/" + prefix + "-labels-idx1-ubyte",
        testing_files::IdxLabelsFile(prefix[1] == 'r' ? 6 : 3));
  }
  v1::DatasetSpec idx;
  idx.set_format(v1::DATASET_FORMAT_IDX);
  idx.set_path(dir);
  absl::StatusOr<JobData> a = LoadJobData(idx, 1);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->train->size(), 6);
  EXPECT_EQ(a->test->size(), 3);
  EXPECT_EQ(a->train->num_classes(), 10);

  v1::DatasetSpec synthetic;
  synthetic.set_format(v1::DATASET_FORMAT_SYNTHETIC);
  synthetic.set_synthetic_train_size(50);
  synthetic.set_synthetic_test_size(20);
  absl::StatusOr<JobData> b = LoadJobData(synthetic, 7);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->train->size(), 50);
  EXPECT_EQ(b->test->size(), 20);

  v1::DatasetSpec none;
  EXPECT_EQ(LoadJobData(none, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringleader
