#include "worker/data/tar_reader.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ringleader {
namespace {

constexpr size_t kBlock = 512;
// A pax header or GNU long name larger than this is not a name.
constexpr uint64_t kMaxMetaSize = 1 << 20;

// A NUL-terminated (or full-width) field.
absl::string_view Field(const uint8_t* h, size_t at, size_t width) {
  const char* p = reinterpret_cast<const char*>(h + at);
  return absl::string_view(p, strnlen(p, width));
}

// A numeric field: octal digits, space- or NUL-padded, or GNU's base-256
// (high bit of the first byte set) for values past 8 GiB.
std::optional<uint64_t> Number(const uint8_t* h, size_t at, size_t width) {
  const uint8_t* p = h + at;
  if (p[0] & 0x80) {
    if (p[0] != 0x80) return std::nullopt;  // Negative or too wide.
    uint64_t v = 0;
    for (size_t i = 1; i < width; ++i) {
      if (v >> 56) return std::nullopt;
      v = (v << 8) | p[i];
    }
    return v;
  }
  size_t i = 0;
  while (i < width && p[i] == ' ') ++i;
  uint64_t v = 0;
  bool any = false;
  for (; i < width && p[i] >= '0' && p[i] <= '7'; ++i) {
    if (v >> 60) return std::nullopt;
    v = v * 8 + (p[i] - '0');
    any = true;
  }
  for (; i < width; ++i) {
    if (p[i] != ' ' && p[i] != 0) return std::nullopt;
  }
  if (!any) return std::nullopt;
  return v;
}

// The header checksum: the sum of its bytes with the checksum field read
// as spaces (unsigned, as POSIX says; old writers summed signed bytes).
bool ChecksumOk(const uint8_t* h) {
  const std::optional<uint64_t> want = Number(h, 148, 8);
  if (!want.has_value()) return false;
  uint64_t sum_unsigned = 0;
  int64_t sum_signed = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    const uint8_t b = (i >= 148 && i < 156) ? ' ' : h[i];
    sum_unsigned += b;
    sum_signed += static_cast<int8_t>(b);
  }
  return *want == sum_unsigned || static_cast<int64_t>(*want) == sum_signed;
}

bool AllZero(const uint8_t* h) {
  return std::all_of(h, h + kBlock, [](uint8_t b) { return b == 0; });
}

// The "path" record of a pax extended header ("LEN path=VALUE\n" records),
// or nullopt.
std::optional<std::string> PaxPath(absl::string_view body) {
  while (!body.empty()) {
    const size_t space = body.find(' ');
    uint64_t len = 0;
    if (space == absl::string_view::npos ||
        !absl::SimpleAtoi(body.substr(0, space), &len) || len <= space ||
        len > body.size()) {
      return std::nullopt;
    }
    absl::string_view record = body.substr(space + 1, len - space - 1);
    if (!record.empty() && record.back() == '\n') record.remove_suffix(1);
    if (absl::StartsWith(record, "path=")) {
      return std::string(record.substr(5));
    }
    body.remove_prefix(len);
  }
  return std::nullopt;
}

std::string HeaderName(const uint8_t* h) {
  const absl::string_view magic = Field(h, 257, 6);
  const absl::string_view prefix = Field(h, 345, 155);
  std::string name(Field(h, 0, 100));
  // ustar's prefix (not GNU's "ustar  ", whose bytes there mean other things).
  if (magic == "ustar" && h[263] == '0' && !prefix.empty()) {
    name = absl::StrCat(prefix, "/", name);
  }
  return name;
}

uint64_t Padded(uint64_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

}  // namespace

absl::StatusOr<std::vector<TarMember>> ListTarMembers(const uint8_t* data,
                                                      size_t size) {
  std::vector<TarMember> out;
  std::optional<std::string> next_name;  // From a GNU 'L' or pax header.
  uint64_t pos = 0;
  while (pos + kBlock <= size) {
    const uint8_t* h = data + pos;
    if (AllZero(h)) break;  // The end-of-archive trailer.
    if (!ChecksumOk(h)) {
      return absl::DataLossError(absl::StrCat(
          "not a tar archive, or corrupt: bad header checksum at byte ", pos));
    }
    const std::optional<uint64_t> member_size = Number(h, 124, 12);
    if (!member_size.has_value()) {
      return absl::DataLossError(absl::StrCat("corrupt tar header at byte ",
                                              pos, ": unreadable size"));
    }
    const uint64_t begin = pos + kBlock;
    if (*member_size > size - begin) {
      return absl::DataLossError(
          absl::StrCat("truncated tar archive: the member at byte ", pos,
                       " holds ", *member_size, " bytes but the archive ends ",
                       size - begin, " bytes after its header"));
    }
    const char type = static_cast<char>(h[156]);
    const absl::string_view body(reinterpret_cast<const char*>(data + begin),
                                 *member_size);
    if ((type == 'L' || type == 'x') && *member_size > kMaxMetaSize) {
      return absl::DataLossError(absl::StrCat("corrupt tar header at byte ",
                                              pos, ": a long name of ",
                                              *member_size, " bytes"));
    }
    if (type == 'L') {
      next_name = std::string(body.substr(0, body.find('\0')));
    } else if (type == 'x') {
      if (std::optional<std::string> p = PaxPath(body)) next_name = *p;
    } else if (type == '0' || type == '\0' || type == '7') {
      out.push_back(
          TarMember{next_name.value_or(HeaderName(h)), begin, *member_size});
      next_name.reset();
    } else {
      next_name.reset();  // Directories, links, devices: not samples.
    }
    pos = begin + Padded(*member_size);
  }
  return out;
}

}  // namespace ringleader
