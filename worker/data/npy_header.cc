#include "worker/data/npy_header.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

// Readers take the mapped bytes as host integers and floats.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              ".npy readers assume a little-endian host");

namespace ringleader {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// Magic, two version bytes, then a 2-byte (1.0) or 4-byte (2.0, 3.0) length.
constexpr size_t kPreambleV1 = kMagicLen + 2 + 2;
constexpr size_t kPreambleV2 = kMagicLen + 2 + 4;
// np.save pads the header so that the data starts at a multiple of this.
constexpr size_t kAlign = 64;

struct DtypeInfo {
  NpyDtype dtype;
  const char* code;  // descr without the byte-order character.
  size_t size;
  const char* name;
  bool is_float;
};

constexpr DtypeInfo kDtypes[] = {
    {NpyDtype::kUint8, "u1", 1, "uint8", false},
    {NpyDtype::kInt8, "i1", 1, "int8", false},
    {NpyDtype::kUint16, "u2", 2, "uint16", false},
    {NpyDtype::kInt16, "i2", 2, "int16", false},
    {NpyDtype::kUint32, "u4", 4, "uint32", false},
    {NpyDtype::kInt32, "i4", 4, "int32", false},
    {NpyDtype::kInt64, "i8", 8, "int64", false},
    {NpyDtype::kFloat16, "f2", 2, "float16", true},
    {NpyDtype::kFloat32, "f4", 4, "float32", true},
    {NpyDtype::kFloat64, "f8", 8, "float64", true},
};

const DtypeInfo& Info(NpyDtype dtype) {
  return kDtypes[static_cast<int>(dtype)];
}

// Why a descr the format allows is still refused, for the kinds numpy
// users meet; nullopt when the code is not one of them.
std::optional<std::string> RefusedKind(absl::string_view code) {
  if (code == "b1") return "bool arrays are not supported: save as uint8";
  if (code == "u8") {
    return "uint64 is not supported (values over 2^63 - 1 do not fit "
           "int64): save as int64";
  }
  if (code.empty()) return std::nullopt;
  switch (code[0]) {
    case 'O':
      return "object arrays are not supported (they hold pickled Python "
             "objects)";
    case 'S':
    case 'a':
    case 'U':
      return "string arrays are not supported";
    case 'V':
      return "void (raw record) arrays are not supported";
    case 'c':
      return "complex arrays are not supported";
    case 'M':
    case 'm':
      return "datetime arrays are not supported";
  }
  return std::nullopt;
}

// Maps a descr string to a dtype, or says why not (without the path).
absl::StatusOr<NpyDtype> DtypeFromDescr(absl::string_view descr) {
  const std::string quoted =
      absl::StrCat("descr '", absl::CHexEscape(descr), "'");
  char order = '=';
  absl::string_view code = descr;
  if (!code.empty() &&
      absl::string_view("<>|=").find(code[0]) != absl::string_view::npos) {
    order = code[0];
    code.remove_prefix(1);
  }
  for (const DtypeInfo& info : kDtypes) {
    if (code != info.code) continue;
    if (info.size > 1 && order == '>') {
      return absl::InvalidArgumentError(absl::StrCat(
          "big-endian data (", quoted,
          ") is not supported: save it little-endian, e.g. arr.astype('<",
          info.code, "')"));
    }
    if (info.size > 1 && order == '|') {
      return absl::InvalidArgumentError(
          absl::StrCat(quoted, " gives no byte order for a multi-byte type"));
    }
    return info.dtype;  // '=' and no order: native, i.e. little-endian.
  }
  if (std::optional<std::string> why = RefusedKind(code)) {
    return absl::InvalidArgumentError(absl::StrCat(*why, " (", quoted, ")"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unsupported ", quoted,
      " (supported: uint8, int8, uint16, int16, uint32, int32, int64, "
      "float16, float32, float64, little-endian)"));
}

}  // namespace

size_t NpyDtypeSize(NpyDtype dtype) { return Info(dtype).size; }
const char* NpyDtypeName(NpyDtype dtype) { return Info(dtype).name; }
bool NpyDtypeIsFloat(NpyDtype dtype) { return Info(dtype).is_float; }

const char* NpyDescr(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::kUint8:
      return "|u1";
    case NpyDtype::kInt8:
      return "|i1";
    case NpyDtype::kUint16:
      return "<u2";
    case NpyDtype::kInt16:
      return "<i2";
    case NpyDtype::kUint32:
      return "<u4";
    case NpyDtype::kInt32:
      return "<i4";
    case NpyDtype::kInt64:
      return "<i8";
    case NpyDtype::kFloat16:
      return "<f2";
    case NpyDtype::kFloat32:
      return "<f4";
    case NpyDtype::kFloat64:
      return "<f8";
  }
  return "?";
}

int64_t NpyHeader::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

// The header's Python dict, once parsed.
struct HeaderDict {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;
};

// A recursive-descent parser of the one dict literal a .npy header holds:
// string keys; a string, a bool or a tuple of non-negative ints as values.
// Not recursive in fact (no nested values are accepted), so no input can
// exhaust the stack; every read checks the position against the end.
class HeaderParser {
 public:
  explicit HeaderParser(absl::string_view text) : text_(text) {}

  absl::Status Parse(HeaderDict& out);

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  void SkipSpace();
  absl::Status Expect(char c, absl::string_view what);
  absl::Status Error(absl::string_view what) const;

  absl::Status ParseEntry(HeaderDict& out);
  absl::StatusOr<std::string> ParseString();
  absl::StatusOr<bool> ParseBool();
  absl::StatusOr<std::vector<int64_t>> ParseShape();
  absl::StatusOr<int64_t> ParseDim();

  const absl::string_view text_;
  size_t pos_ = 0;
};

absl::Status HeaderParser::Error(absl::string_view what) const {
  return absl::InvalidArgumentError(absl::StrCat(
      "bad header dict: ", what, " at byte ", pos_, " of the header"));
}

void HeaderParser::SkipSpace() {
  while (!AtEnd() && absl::ascii_isspace(static_cast<unsigned char>(Peek()))) {
    ++pos_;
  }
}

absl::Status HeaderParser::Expect(char c, absl::string_view what) {
  SkipSpace();
  if (Peek() != c || AtEnd()) return Error(absl::StrCat("expected ", what));
  ++pos_;
  return absl::OkStatus();
}

absl::Status HeaderParser::Parse(HeaderDict& out) {
  if (absl::Status s = Expect('{', "'{'"); !s.ok()) return s;
  SkipSpace();
  // Entries separated by commas, a trailing comma allowed (np.save writes
  // one), as in a Python dict display.
  while (Peek() != '}' || AtEnd()) {
    if (absl::Status s = ParseEntry(out); !s.ok()) return s;
    SkipSpace();
    if (Peek() == ',' && !AtEnd()) {
      ++pos_;
      SkipSpace();
    } else if (Peek() != '}' || AtEnd()) {
      return Error("expected ',' or '}' after a value");
    }
  }
  ++pos_;
  // What follows the dict is padding: spaces and the final newline.
  SkipSpace();
  if (!AtEnd()) return Error("unexpected bytes after the dict");
  return absl::OkStatus();
}

absl::Status HeaderParser::ParseEntry(HeaderDict& out) {
  absl::StatusOr<std::string> key = ParseString();
  if (!key.ok()) return key.status();
  if (absl::Status s = Expect(':', "':' after a key"); !s.ok()) return s;
  SkipSpace();
  const bool duplicate = (*key == "descr" && out.descr) ||
                         (*key == "fortran_order" && out.fortran_order) ||
                         (*key == "shape" && out.shape);
  if (duplicate) return Error(absl::StrCat("key '", *key, "' repeated"));
  if (*key == "descr") {
    if (Peek() == '[' && !AtEnd()) {
      return absl::InvalidArgumentError(
          "structured dtypes (a list as descr) are not supported");
    }
    absl::StatusOr<std::string> descr = ParseString();
    if (!descr.ok()) return descr.status();
    out.descr = *std::move(descr);
  } else if (*key == "fortran_order") {
    absl::StatusOr<bool> b = ParseBool();
    if (!b.ok()) return b.status();
    out.fortran_order = *b;
  } else if (*key == "shape") {
    absl::StatusOr<std::vector<int64_t>> shape = ParseShape();
    if (!shape.ok()) return shape.status();
    out.shape = *std::move(shape);
  } else {
    return Error(absl::StrCat("unexpected key '", absl::CHexEscape(*key),
                              "' (the keys are 'descr', 'fortran_order' "
                              "and 'shape')"));
  }
  return absl::OkStatus();
}

// A quoted string without escapes (no valid descr or key needs one).
absl::StatusOr<std::string> HeaderParser::ParseString() {
  const char quote = Peek();
  if (AtEnd() || (quote != '\'' && quote != '"')) {
    return Error("expected a quoted string");
  }
  const size_t start = ++pos_;
  while (!AtEnd() && Peek() != quote) {
    if (Peek() == '\\') return Error("escape in a string (not supported)");
    if (Peek() == '\n') return Error("newline in a string");
    ++pos_;
  }
  if (AtEnd()) return Error("unterminated string");
  const std::string value(text_.substr(start, pos_ - start));
  ++pos_;
  return value;
}

absl::StatusOr<bool> HeaderParser::ParseBool() {
  for (const auto& [word, value] :
       {std::pair<absl::string_view, bool>{"True", true}, {"False", false}}) {
    if (text_.substr(pos_, word.size()) == word) {
      const size_t end = pos_ + word.size();
      if (end < text_.size() &&
          (absl::ascii_isalnum(static_cast<unsigned char>(text_[end])) ||
           text_[end] == '_')) {
        break;
      }
      pos_ = end;
      return value;
    }
  }
  return Error("fortran_order must be True or False");
}

// A non-negative decimal int; a trailing L (Python 2's long, which old
// version 1.0 files may carry) is allowed.
absl::StatusOr<int64_t> HeaderParser::ParseDim() {
  if (Peek() == '-' && !AtEnd()) {
    return absl::InvalidArgumentError("negative dimension in shape");
  }
  if (!absl::ascii_isdigit(static_cast<unsigned char>(Peek())) || AtEnd()) {
    return Error("expected a dimension (a non-negative integer)");
  }
  int64_t value = 0;
  while (!AtEnd() && absl::ascii_isdigit(static_cast<unsigned char>(Peek()))) {
    const int digit = Peek() - '0';
    if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
      return absl::InvalidArgumentError(
          "a shape dimension does not fit in 64 bits");
    }
    value = value * 10 + digit;
    ++pos_;
  }
  if (!AtEnd() && (Peek() == 'L' || Peek() == 'l')) ++pos_;
  if (!AtEnd() && (absl::ascii_isalnum(static_cast<unsigned char>(Peek())) ||
                   Peek() == '_' || Peek() == '.')) {
    return Error("expected a dimension (a non-negative integer)");
  }
  return value;
}

// A tuple display: (), (3,), (3, 4) or (3, 4,). "(3)" is an int in
// Python, not a tuple, and numpy refuses it, so this does too.
absl::StatusOr<std::vector<int64_t>> HeaderParser::ParseShape() {
  if (Peek() != '(' || AtEnd()) return Error("shape must be a tuple");
  ++pos_;
  std::vector<int64_t> dims;
  SkipSpace();
  bool comma = false;
  while (Peek() != ')' || AtEnd()) {
    if (dims.size() == kMaxNpyDims) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape has more than ", kMaxNpyDims, " dimensions"));
    }
    absl::StatusOr<int64_t> dim = ParseDim();
    if (!dim.ok()) return dim.status();
    dims.push_back(*dim);
    SkipSpace();
    comma = Peek() == ',' && !AtEnd();
    if (comma) {
      ++pos_;
      SkipSpace();
    } else if (Peek() != ')' || AtEnd()) {
      return Error("expected ',' or ')' in shape");
    }
  }
  ++pos_;
  if (dims.size() == 1 && !comma) {
    return Error("shape (N) is not a tuple (a 1-tuple is written (N,))");
  }
  return dims;
}

uint32_t LittleEndian(const uint8_t* p, size_t bytes) {
  uint32_t v = 0;
  for (size_t i = bytes; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return absl::StrCat("(", shape[0], ",)");
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

// Bytes of an array of `shape` and element size `element`, or nullopt when
// that overflows. Zero dimensions count as 1 while checking, as numpy
// checks, so a shape is refused for its other dimensions even if empty.
std::optional<size_t> ArrayBytes(const std::vector<int64_t>& shape,
                                 size_t element) {
  int64_t bytes = static_cast<int64_t>(element);
  bool empty = false;
  for (int64_t d : shape) {
    empty = empty || d == 0;
    if (__builtin_mul_overflow(bytes, d == 0 ? 1 : d, &bytes)) {
      return std::nullopt;
    }
  }
  return empty ? 0 : static_cast<size_t>(bytes);
}

// The preamble: magic, version and header length; sets the header's
// position. Errors without the path.
absl::Status ParsePreamble(const uint8_t* data, size_t size,
                           size_t& header_start, size_t& header_len) {
  const size_t magic_have = size < kMagicLen ? size : kMagicLen;
  if (size == 0 || std::memcmp(data, kMagic, magic_have) != 0) {
    return absl::InvalidArgumentError(
        "not a .npy file (it does not start with \\x93NUMPY)");
  }
  if (size < kMagicLen + 2) {
    return absl::DataLossError(absl::StrCat(
        "truncated: ", size, " bytes, the file ends inside the preamble"));
  }
  const int major = data[kMagicLen];
  const int minor = data[kMagicLen + 1];
  if (major < 1 || major > 3 || minor != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported .npy version ", major, ".", minor,
                     " (supported: 1.0, 2.0, 3.0)"));
  }
  header_start = major == 1 ? kPreambleV1 : kPreambleV2;
  if (size < header_start) {
    return absl::DataLossError(absl::StrCat(
        "truncated: ", size, " bytes, the file ends inside the preamble"));
  }
  header_len = LittleEndian(data + kMagicLen + 2, header_start - kMagicLen - 2);
  if (header_len > size - header_start) {
    return absl::DataLossError(absl::StrCat(
        "truncated: the preamble says the header is ", header_len,
        " bytes, the file has ", size - header_start, " after the preamble"));
  }
  return absl::OkStatus();
}

// Checks the parsed dict and fills `out` from it. Errors without the path.
absl::Status CheckDict(const HeaderDict& dict, NpyHeader& out) {
  if (!dict.descr || !dict.fortran_order || !dict.shape) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad header dict: missing key '",
                     !dict.descr           ? "descr"
                     : !dict.fortran_order ? "fortran_order"
                                           : "shape",
                     "'"));
  }
  absl::StatusOr<NpyDtype> dtype = DtypeFromDescr(*dict.descr);
  if (!dtype.ok()) return dtype.status();
  if (*dict.fortran_order) {
    return absl::InvalidArgumentError(
        "fortran_order is True (column-major); only C order is supported: "
        "save C order: np.save(path, np.ascontiguousarray(arr))");
  }
  out.dtype = *dtype;
  out.shape = *dict.shape;
  std::optional<size_t> bytes = ArrayBytes(out.shape, NpyDtypeSize(out.dtype));
  if (!bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape ", ShapeString(out.shape), " of ",
                     NpyDtypeName(out.dtype), " is over 2^63 bytes"));
  }
  out.data_bytes = *bytes;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NpyHeader> ParseNpyHeader(const uint8_t* data, size_t size,
                                         absl::string_view path) {
  const auto with_path = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  };
  size_t header_start = 0;
  size_t header_len = 0;
  if (absl::Status s = ParsePreamble(data, size, header_start, header_len);
      !s.ok()) {
    return with_path(s);
  }
  HeaderDict dict;
  HeaderParser parser(absl::string_view(
      reinterpret_cast<const char*>(data) + header_start, header_len));
  if (absl::Status s = parser.Parse(dict); !s.ok()) return with_path(s);
  NpyHeader header;
  if (absl::Status s = CheckDict(dict, header); !s.ok()) return with_path(s);
  header.data_offset = header_start + header_len;
  const size_t have = size - header.data_offset;
  if (header.data_bytes > have) {
    return absl::DataLossError(absl::StrCat(
        path, ": truncated: header says ", header.data_bytes,
        " bytes of data, file has ", have, " (shape ",
        ShapeString(header.shape), " of ", NpyDtypeName(header.dtype), ")"));
  }
  return header;
}

std::string FormatNpyHeader(NpyDtype dtype, const std::vector<int64_t>& shape) {
  // As numpy.lib.format._write_array_header builds it.
  std::string dict = absl::StrCat(
      "{'descr': '", NpyDescr(dtype),
      "', 'fortran_order': False, 'shape': ", ShapeString(shape), ", }");
  for (int major : {1, 2}) {
    const size_t preamble = major == 1 ? kPreambleV1 : kPreambleV2;
    // The newline counts; numpy pads a whole kAlign when already aligned.
    const size_t pad = kAlign - (preamble + dict.size() + 1) % kAlign;
    const size_t header_len = dict.size() + pad + 1;
    if (major == 1 && header_len > 0xffff) continue;
    std::string out(kMagic, kMagicLen);
    out.push_back(static_cast<char>(major));
    out.push_back(0);
    for (size_t i = 0; i < preamble - kMagicLen - 2; ++i) {
      out.push_back(static_cast<char>((header_len >> (8 * i)) & 0xff));
    }
    out += dict;
    out.append(pad, ' ');
    out.push_back('\n');
    return out;
  }
  return "";  // Unreachable: a 2.0 header holds 4 GiB.
}

}  // namespace ringleader
