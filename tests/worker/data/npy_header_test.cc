#include "worker/data/npy_header.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/data/npy_test_files.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing_files::NpyBytes;
using testing_files::NpyWithDict;

constexpr char kPath[] = "/data/x.npy";

absl::StatusOr<NpyHeader> Parse(const std::string& bytes) {
  return ParseNpyHeader(reinterpret_cast<const uint8_t*>(bytes.data()),
                        bytes.size(), kPath);
}

// The dict of a valid header with one field replaced.
std::string Dict(const std::string& descr = "'<f4'",
                 const std::string& fortran = "False",
                 const std::string& shape = "(2, 3)") {
  return "{'descr': " + descr + ", 'fortran_order': " + fortran +
         ", 'shape': " + shape + ", }";
}

void ExpectError(const std::string& bytes, absl::StatusCode code,
                 const std::string& what) {
  absl::StatusOr<NpyHeader> h = Parse(bytes);
  ASSERT_FALSE(h.ok()) << "accepted: " << bytes;
  EXPECT_EQ(h.status().code(), code) << h.status();
  EXPECT_THAT(std::string(h.status().message()),
              StartsWith(std::string(kPath) + ": "));
  EXPECT_THAT(std::string(h.status().message()), HasSubstr(what));
}

void ExpectInvalid(const std::string& bytes, const std::string& what) {
  ExpectError(bytes, absl::StatusCode::kInvalidArgument, what);
}

struct DtypeCase {
  const char* descr;
  NpyDtype dtype;
  size_t size;
  const char* name;
};

TEST(NpyHeaderTest, EveryAcceptedDescr) {
  const DtypeCase cases[] = {
      {"|u1", NpyDtype::kUint8, 1, "uint8"},
      {"<u1", NpyDtype::kUint8, 1, "uint8"},
      {"|i1", NpyDtype::kInt8, 1, "int8"},
      {"<u2", NpyDtype::kUint16, 2, "uint16"},
      {"<i2", NpyDtype::kInt16, 2, "int16"},
      {"<u4", NpyDtype::kUint32, 4, "uint32"},
      {"<i4", NpyDtype::kInt32, 4, "int32"},
      {"<i8", NpyDtype::kInt64, 8, "int64"},
      {"<f2", NpyDtype::kFloat16, 2, "float16"},
      {"<f4", NpyDtype::kFloat32, 4, "float32"},
      {"<f8", NpyDtype::kFloat64, 8, "float64"},
  };
  for (const DtypeCase& c : cases) {
    SCOPED_TRACE(c.descr);
    const std::string dict = Dict(std::string("'") + c.descr + "'");
    const std::string data(6 * c.size, '\x01');
    absl::StatusOr<NpyHeader> h = Parse(NpyWithDict(dict, data));
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(h->dtype, c.dtype);
    EXPECT_EQ(NpyDtypeSize(c.dtype), c.size);
    EXPECT_STREQ(NpyDtypeName(c.dtype), c.name);
    EXPECT_THAT(h->shape, ElementsAre(2, 3));
    EXPECT_EQ(h->data_offset, 10 + dict.size());
    EXPECT_EQ(h->data_bytes, data.size());
    EXPECT_EQ(h->num_elements(), 6);
  }
}

TEST(NpyHeaderTest, FormatRoundTripsEveryDtypeAndShape) {
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {3}, {2, 3}, {2, 0, 5}, {1, 1, 1, 1, 2}};
  for (int d = 0; d <= static_cast<int>(NpyDtype::kFloat64); ++d) {
    const NpyDtype dtype = static_cast<NpyDtype>(d);
    for (const std::vector<int64_t>& shape : shapes) {
      SCOPED_TRACE(NpyDtypeName(dtype));
      int64_t n = 1;
      for (int64_t s : shape) n *= s;
      const std::string header = FormatNpyHeader(dtype, shape);
      EXPECT_EQ(header.size() % 64, 0u);
      EXPECT_EQ(header.back(), '\n');
      absl::StatusOr<NpyHeader> h = Parse(
          NpyBytes(dtype, shape, std::string(n * NpyDtypeSize(dtype), 'z')));
      ASSERT_TRUE(h.ok()) << h.status();
      EXPECT_EQ(h->dtype, dtype);
      EXPECT_EQ(h->shape, shape);
      EXPECT_EQ(h->data_offset, header.size());
      EXPECT_EQ(h->data_bytes, n * NpyDtypeSize(dtype));
      EXPECT_EQ(h->num_elements(), n);
    }
  }
}

TEST(NpyHeaderTest, FormatMatchesNumpysBytes) {
  // np.save(f, np.zeros((2, 3), np.float32)), header as numpy 1.24 writes it.
  std::string expected("\x93NUMPY\x01\x00\x76\x00", 10);
  expected += "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
              std::string(58, ' ') + "\n";
  EXPECT_EQ(FormatNpyHeader(NpyDtype::kFloat32, {2, 3}), expected);
  EXPECT_THAT(FormatNpyHeader(NpyDtype::kUint8, {5}),
              HasSubstr("{'descr': '|u1', 'fortran_order': False, "
                        "'shape': (5,), }"));
  EXPECT_THAT(FormatNpyHeader(NpyDtype::kInt64, {}),
              HasSubstr("'shape': (), }"));
}

TEST(NpyHeaderTest, Versions2And3HaveAFourByteLength) {
  for (int major : {2, 3}) {
    SCOPED_TRACE(major);
    const std::string dict = Dict();
    absl::StatusOr<NpyHeader> h =
        Parse(NpyWithDict(dict, std::string(24, '\0'), major));
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(h->data_offset, 12 + dict.size());
    EXPECT_EQ(h->data_bytes, 24u);
  }
}

TEST(NpyHeaderTest, AcceptsWhatNumpyReads) {
  const std::string data(24, '\0');
  // Double quotes, no trailing comma, other key order, extra whitespace,
  // Python 2 longs, no byte order on a one-byte type.
  for (const std::string& dict :
       {std::string("{\"descr\": \"<f4\", \"fortran_order\": False, "
                    "\"shape\": (2, 3)}"),
        std::string("{'shape': (2,3,), 'fortran_order': False, "
                    "'descr': '<f4'}\n"),
        std::string("  {  'descr' : '<f4' ,\t'fortran_order':False,"
                    "'shape':( 2 , 3 ) , }      \n"),
        std::string("{'descr': '<f4', 'fortran_order': False, "
                    "'shape': (2L, 3L), }")}) {
    SCOPED_TRACE(dict);
    absl::StatusOr<NpyHeader> h = Parse(NpyWithDict(dict, data));
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_THAT(h->shape, ElementsAre(2, 3));
  }
  absl::StatusOr<NpyHeader> u1 = Parse(NpyWithDict(
      "{'descr': 'u1', 'fortran_order': False, 'shape': (3,)}", "abc"));
  ASSERT_TRUE(u1.ok()) << u1.status();
  EXPECT_EQ(u1->dtype, NpyDtype::kUint8);
}

TEST(NpyHeaderTest, TrailingBytesAfterTheDataAreIgnored) {
  absl::StatusOr<NpyHeader> h = Parse(NpyBytes(NpyDtype::kUint8, {3}, "abc") +
                                      "trailing bytes numpy ignores");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->data_bytes, 3u);
}

TEST(NpyHeaderTest, BadMagic) {
  ExpectInvalid("", "not a .npy file");
  ExpectInvalid("PK\x03\x04 an npz is a zip", "not a .npy file");
  std::string bytes = NpyBytes(NpyDtype::kUint8, {1}, "a");
  bytes[1] = 'n';
  ExpectInvalid(bytes, "not a .npy file");
}

TEST(NpyHeaderTest, APrefixOfTheMagicIsTruncated) {
  ExpectError("\x93NUM", absl::StatusCode::kDataLoss, "truncated");
  ExpectError("\x93NUMPY", absl::StatusCode::kDataLoss, "truncated");
}

TEST(NpyHeaderTest, UnsupportedVersions) {
  std::string bytes = NpyBytes(NpyDtype::kUint8, {1}, "a");
  bytes[6] = 4;
  ExpectInvalid(bytes, "unsupported .npy version 4.0");
  bytes[6] = 1;
  bytes[7] = 1;
  ExpectInvalid(bytes, "unsupported .npy version 1.1");
  bytes[6] = 0;
  bytes[7] = 0;
  ExpectInvalid(bytes, "unsupported .npy version 0.0");
}

TEST(NpyHeaderTest, EveryTruncationIsAnErrorNeverACrash) {
  const std::string full =
      NpyBytes(NpyDtype::kInt32, {2, 3}, std::string(24, '\x7f'));
  ASSERT_TRUE(Parse(full).ok());
  for (size_t n = 0; n < full.size(); ++n) {
    SCOPED_TRACE(n);
    // Exactly the bytes kept, so a read past them is a heap overflow that
    // ASan would catch.
    const std::vector<uint8_t> prefix(full.begin(), full.begin() + n);
    absl::StatusOr<NpyHeader> h =
        ParseNpyHeader(prefix.empty() ? nullptr : prefix.data(), n, kPath);
    ASSERT_FALSE(h.ok());
    if (n >= 8) {
      EXPECT_EQ(h.status().code(), absl::StatusCode::kDataLoss);
    }
    EXPECT_THAT(std::string(h.status().message()), StartsWith(kPath));
  }
}

TEST(NpyHeaderTest, TruncatedDataSaysHowMuch) {
  const std::string bytes =
      NpyBytes(NpyDtype::kFloat32, {3, 4}, std::string(40, '\0'));
  ExpectError(bytes, absl::StatusCode::kDataLoss,
              "truncated: header says 48 bytes of data, file has 40");
}

TEST(NpyHeaderTest, HeaderLengthPastTheEnd) {
  std::string bytes = NpyWithDict(Dict());
  bytes[8] = '\xff';
  bytes[9] = '\x7f';
  ExpectError(bytes, absl::StatusCode::kDataLoss, "truncated");
}

TEST(NpyHeaderTest, FortranOrderIsRefusedWithAFix) {
  ExpectInvalid(NpyWithDict(Dict("'<f4'", "True"), std::string(24, '\0')),
                "save C order: np.save(path, np.ascontiguousarray(arr))");
}

TEST(NpyHeaderTest, BigEndianIsRefused) {
  ExpectInvalid(NpyWithDict(Dict("'>f4'"), std::string(24, '\0')),
                "big-endian data (descr '>f4') is not supported");
  ExpectInvalid(NpyWithDict(Dict("'>i8'"), std::string(48, '\0')),
                "big-endian");
  // Byte order means nothing for one byte.
  EXPECT_TRUE(Parse(NpyWithDict(Dict("'>u1'"), std::string(6, '\0'))).ok());
}

TEST(NpyHeaderTest, UnsupportedDtypesSayWhy) {
  const std::string data(200, '\0');
  ExpectInvalid(NpyWithDict(Dict("'|b1'"), data), "bool arrays");
  ExpectInvalid(NpyWithDict(Dict("'|O'"), data), "object arrays");
  ExpectInvalid(NpyWithDict(Dict("'<U5'"), data), "string arrays");
  ExpectInvalid(NpyWithDict(Dict("'|S3'"), data), "string arrays");
  ExpectInvalid(NpyWithDict(Dict("'|V8'"), data), "void");
  ExpectInvalid(NpyWithDict(Dict("'<c8'"), data), "complex");
  ExpectInvalid(NpyWithDict(Dict("'<M8[s]'"), data), "datetime");
  ExpectInvalid(NpyWithDict(Dict("'<u8'"), data), "uint64 is not supported");
  ExpectInvalid(NpyWithDict(Dict("'<f16'"), data), "unsupported descr '<f16'");
  ExpectInvalid(NpyWithDict(Dict("'|f4'"), data), "no byte order");
  ExpectInvalid(NpyWithDict(Dict("''"), data), "unsupported descr ''");
  ExpectInvalid(NpyWithDict(Dict("[('a', '<f4'), ('b', '<i4')]"), data),
                "structured dtypes");
}

TEST(NpyHeaderTest, MalformedDicts) {
  const std::string data(24, '\0');
  const auto bad = [&](const std::string& dict, const std::string& what) {
    SCOPED_TRACE(dict);
    ExpectInvalid(NpyWithDict(dict, data), what);
  };
  bad("", "expected '{'");
  bad("[1, 2]", "expected '{'");
  bad("{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'");
  bad("{'fortran_order': False, 'shape': (2, 3)}", "missing key 'descr'");
  bad("{'descr': '<f4', 'shape': (2, 3)}", "missing key 'fortran_order'");
  bad(Dict() + "{'x': 1}", "unexpected bytes after the dict");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}",
      "unexpected key 'x'");
  bad("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
      "'shape': (2, 3)}",
      "key 'descr' repeated");
  bad("{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3)}",
      "expected ',' or '}'");
  bad("{'descr' '<f4', 'fortran_order': False, 'shape': (2, 3)}",
      "expected ':'");
  bad("{descr: '<f4', 'fortran_order': False, 'shape': (2, 3)}",
      "expected a quoted string");
  bad("{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3)}",
      "expected ',' or '}'");
  bad("{'descr': '<f4", "unterminated string");
  bad("{'descr': '<\\x66\x34'}", "escape");
  bad(Dict("'<f4'", "1"), "fortran_order must be True or False");
  bad(Dict("'<f4'", "Falsey"), "fortran_order must be True or False");
  bad(Dict("'<f4'", "False", "(6)"), "is not a tuple");
  bad(Dict("'<f4'", "False", "[2, 3]"), "shape must be a tuple");
  bad(Dict("'<f4'", "False", "(2, 3"), "expected");
  bad(Dict("'<f4'", "False", "(,)"), "expected a dimension");
  bad(Dict("'<f4'", "False", "(2.5, 3)"), "expected a dimension");
  bad(Dict("'<f4'", "False", "(2, 0x3)"), "expected a dimension");
  bad(Dict("'<f4'", "False", "(2, 3,,)"), "expected a dimension");
  bad(Dict("'<f4'", "False", "(2, -3)"), "negative dimension");
  bad(Dict() + std::string(1, '\0'), "unexpected bytes after the dict");
}

TEST(NpyHeaderTest, HugeShapesAreRefusedNotOverflowed) {
  const std::string data(64, '\0');
  // 2^62 x 4 elements: the element count alone overflows int64.
  ExpectInvalid(
      NpyWithDict(Dict("'<f4'", "False", "(4611686018427387904, 4)"), data),
      "over 2^63 bytes");
  // 2^61 float32: the element count fits, its bytes do not.
  ExpectInvalid(
      NpyWithDict(Dict("'<f4'", "False", "(2305843009213693952,)"), data),
      "over 2^63 bytes");
  // A zero dimension does not excuse the others (numpy refuses it too).
  ExpectInvalid(
      NpyWithDict(Dict("'<f8'", "False", "(0, 4611686018427387904, 8)"), data),
      "over 2^63 bytes");
  ExpectInvalid(
      NpyWithDict(Dict("'<f4'", "False", "(123456789012345678901234567890,)"),
                  data),
      "does not fit in 64 bits");
  // Large but representable: the file is just too short.
  ExpectError(NpyWithDict(Dict("'<f4'", "False", "(1099511627776,)"), data),
              absl::StatusCode::kDataLoss,
              "header says 4398046511104 bytes of data, file has 64");
  std::string many = "(";
  for (int i = 0; i < 65; ++i) many += "1, ";
  ExpectInvalid(NpyWithDict(Dict("'<f4'", "False", many + ")"), data),
                "more than 64 dimensions");
}

TEST(NpyHeaderTest, BinaryGarbageInTheHeaderIsAnError) {
  std::string dict = Dict();
  for (char& c : dict) {
    if (c == ' ') c = '\xff';
  }
  ExpectInvalid(NpyWithDict(dict, std::string(24, '\0')), "bad header dict");
}

}  // namespace
}  // namespace ringleader
