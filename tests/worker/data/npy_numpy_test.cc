// Reads files that numpy itself wrote (/usr/bin/python3 with numpy, as
// Debian's python3-numpy installs it): every dtype, versions 2.0 and 3.0,
// float16 against numpy's own float32 conversion of all 65536 values,
// normalization against numpy's float64 arithmetic, token files. The other
// tests build their files in C++; this one checks that those agree with
// numpy. Skips, saying why, when python3 or numpy is missing.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/data/gather_helper.h"
#include "tests/worker/data/npy_test_files.h"
#include "tests/worker/data/test_files.h"
#include "worker/data/npy_dataset.h"
#include "worker/data/npy_file.h"
#include "worker/data/npy_header.h"
#include "worker/data/token_dataset.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing_files::Gather;
using testing_files::Gathered;

constexpr char kScript[] = R"py(
import sys
import numpy as np
d = DIR
vals = np.arange(12).reshape(3, 2, 2) - 5
for name in ['u1', 'i1', 'u2', 'i2', 'u4', 'i4', 'i8', 'f2', 'f4', 'f8']:
    a = vals + 5 if name[0] == 'u' else vals
    np.save(f'{d}/x_{name}.npy', a.astype('<' + name))
np.save(f'{d}/y.npy', np.array([2, 0, 1], np.int64))
h = np.arange(65536, dtype=np.uint16).view(np.float16)
np.save(f'{d}/half.npy', h)
np.save(f'{d}/half_as_f32.npy', h.astype(np.float32))
np.save(f'{d}/half_y.npy', np.zeros(65536, np.uint8))
np.save(f'{d}/fortran.npy', np.asfortranarray(np.ones((2, 3), np.float32)))
np.save(f'{d}/big.npy', np.ones(3, '>f4'))
for v in (2, 3):
    with open(f'{d}/v{v}.npy', 'wb') as f:
        np.lib.format.write_array(f, vals.astype(np.float32), version=(v, 0))
np.save(f'{d}/tokens.npy', np.arange(1000, 1010, dtype=np.uint16))
np.arange(1000, 1010, dtype=np.uint16).tofile(f'{d}/tokens.bin')
img = (np.arange(24, dtype=np.uint8) * 10).reshape(2, 3, 2, 2)
np.save(f'{d}/img.npy', img)
mean = np.array([0.1, 0.2, 0.3])
std = np.array([0.5, 0.25, 0.125])
ref = (img / 255.0 - mean[None, :, None, None]) / std[None, :, None, None]
np.save(f'{d}/img_ref.npy', ref.astype(np.float32))
)py";

class NpyNumpyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing_files::TempDir("numpy"));
    skip_ = new std::string;
    if (!testing_files::HaveNumpy(*skip_)) return;
    const std::string script = absl::StrCat("DIR = '", *dir_, "'\n", kScript);
    if (!testing_files::RunPython(script)) {
      *skip_ = "";
      failed_ = true;
    }
  }

  void SetUp() override {
    if (!skip_->empty()) GTEST_SKIP() << *skip_;
    ASSERT_FALSE(failed_) << "the numpy script failed";
  }

  static std::string Path(const std::string& name) {
    return absl::StrCat(*dir_, "/", name);
  }

  static std::string* dir_;
  static std::string* skip_;
  static bool failed_;
};

std::string* NpyNumpyTest::dir_ = nullptr;
std::string* NpyNumpyTest::skip_ = nullptr;
bool NpyNumpyTest::failed_ = false;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(NpyNumpyTest, FormatNpyHeaderWritesNumpysBytes) {
  for (const char* name :
       {"u1", "i1", "u2", "i2", "u4", "i4", "i8", "f2", "f4", "f8"}) {
    SCOPED_TRACE(name);
    const std::string path = Path(absl::StrCat("x_", name, ".npy"));
    absl::StatusOr<NpyFile> file = NpyFile::Open(path);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_THAT(file->header().shape, ElementsAre(3, 2, 2));
    const std::string bytes = Slurp(path);
    EXPECT_EQ(bytes.substr(0, file->header().data_offset),
              FormatNpyHeader(file->dtype(), {3, 2, 2}));
  }
}

TEST_F(NpyNumpyTest, EveryDtypeReadsNumpysValues) {
  for (const char* name :
       {"u1", "i1", "u2", "i2", "u4", "i4", "i8", "f2", "f4", "f8"}) {
    SCOPED_TRACE(name);
    auto ds = NpyDataset::Create(
        Split::kTrain, {Path(absl::StrCat("x_", name, ".npy"))}, Path("y.npy"));
    ASSERT_TRUE(ds.ok()) << ds.status();
    EXPECT_EQ((*ds)->num_classes(), 3);
    const Gathered g = Gather(**ds, {2, 0});
    ASSERT_TRUE(g.status.ok()) << g.status;
    const int64_t shift = name[0] == 'u' ? 5 : 0;
    std::vector<int64_t> expected;
    for (int64_t v : {8, 9, 10, 11, 0, 1, 2, 3})
      expected.push_back(v - 5 + shift);
    if (name[0] == 'f') {
      EXPECT_THAT(g.input<float>(0), ElementsAreArray(std::vector<float>(
                                         expected.begin(), expected.end())));
    } else {
      EXPECT_THAT(g.input<int64_t>(0), ElementsAreArray(expected));
    }
    EXPECT_THAT(g.target<int64_t>(), ElementsAre(1, 2));
  }
}

TEST_F(NpyNumpyTest, EveryFloat16MatchesNumpyBitForBit) {
  auto ds =
      NpyDataset::Create(Split::kTrain, {Path("half.npy")}, Path("half_y.npy"));
  ASSERT_TRUE(ds.ok()) << ds.status();
  std::vector<int64_t> all(65536);
  for (int64_t i = 0; i < 65536; ++i) all[i] = i;
  const Gathered g = Gather(**ds, all);
  ASSERT_TRUE(g.status.ok()) << g.status;
  absl::StatusOr<NpyFile> ref = NpyFile::Open(Path("half_as_f32.npy"));
  ASSERT_TRUE(ref.ok()) << ref.status();
  ASSERT_EQ(ref->header().data_bytes, g.inputs[0].size());
  int mismatches = 0;
  for (size_t i = 0; i < 65536; ++i) {
    uint32_t ours, numpys;
    std::memcpy(&ours, g.inputs[0].data() + 4 * i, 4);
    std::memcpy(&numpys, ref->data() + 4 * i, 4);
    if (ours != numpys && ++mismatches <= 5) {
      ADD_FAILURE() << "half 0x" << std::hex << i << ": ours 0x" << ours
                    << ", numpy's 0x" << numpys;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST_F(NpyNumpyTest, NormalizationMatchesNumpy) {
  auto ds =
      NpyDataset::Create(Split::kTrain, {Path("img.npy")}, Path("y.npy"),
                         {1.0 / 255, {0.1, 0.2, 0.3}, {0.5, 0.25, 0.125}});
  // img has 2 samples, y 3: a mismatch, said so; use a matching target.
  ASSERT_FALSE(ds.ok());
  EXPECT_THAT(std::string(ds.status().message()), HasSubstr("has 3 samples"));
  const std::string y = testing_files::TempPath("img_y.npy");
  testing_files::WriteFile(
      y, testing_files::NpyOf<uint8_t>(NpyDtype::kUint8, {2}, {0, 1}));
  ds = NpyDataset::Create(Split::kTrain, {Path("img.npy")}, y,
                          {1.0 / 255, {0.1, 0.2, 0.3}, {0.5, 0.25, 0.125}});
  ASSERT_TRUE(ds.ok()) << ds.status();
  const Gathered g = Gather(**ds, {0, 1});
  ASSERT_TRUE(g.status.ok()) << g.status;
  absl::StatusOr<NpyFile> ref = NpyFile::Open(Path("img_ref.npy"));
  ASSERT_TRUE(ref.ok()) << ref.status();
  const std::vector<float> ours = g.input<float>(0);
  ASSERT_EQ(ours.size() * 4, ref->header().data_bytes);
  for (size_t i = 0; i < ours.size(); ++i) {
    float numpys;
    std::memcpy(&numpys, ref->data() + 4 * i, 4);
    EXPECT_NEAR(ours[i], numpys, 1e-6) << i;
  }
}

TEST_F(NpyNumpyTest, FortranOrderAndBigEndianAreRefused) {
  absl::StatusOr<NpyFile> f = NpyFile::Open(Path("fortran.npy"));
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(f.status().message()),
              HasSubstr("np.ascontiguousarray"));
  f = NpyFile::Open(Path("big.npy"));
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("big-endian"));
}

TEST_F(NpyNumpyTest, Versions2And3) {
  for (const char* name : {"v2.npy", "v3.npy"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<NpyFile> f = NpyFile::Open(Path(name));
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ(f->dtype(), NpyDtype::kFloat32);
    EXPECT_THAT(f->header().shape, ElementsAre(3, 2, 2));
    float last;
    std::memcpy(&last, f->row(2) + 12, 4);
    EXPECT_EQ(last, 6.0f);
  }
}

TEST_F(NpyNumpyTest, TokenFilesFromNumpy) {
  for (const char* name : {"tokens.npy", "tokens.bin"}) {
    SCOPED_TRACE(name);
    auto ds = TokenDataset::Create(Split::kTrain, Path(name), 3);
    ASSERT_TRUE(ds.ok()) << ds.status();
    EXPECT_EQ((*ds)->size(), 3);
    const Gathered g = Gather(**ds, {2});
    ASSERT_TRUE(g.status.ok()) << g.status;
    EXPECT_THAT(g.input<int64_t>(0), ElementsAre(1006, 1007, 1008));
    EXPECT_THAT(g.target<int64_t>(), ElementsAre(1007, 1008, 1009));
  }
}

}  // namespace
}  // namespace ringleader
