#include "worker/data/byte_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace ringleader {
namespace {

// Closes the FILE* when the reader goes away, also on early error returns.
struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

absl::Status ReadError(const std::string& path, int error_number) {
  return absl::ErrnoToStatus(error_number, absl::StrCat(path, ": read failed"));
}

// fread that tells a clean end of file from an I/O error.
absl::StatusOr<size_t> ReadFile(std::FILE* f, const std::string& path,
                                void* out, size_t n) {
  errno = 0;
  const size_t got = std::fread(out, 1, n, f);
  if (got < n && std::ferror(f)) return ReadError(path, errno ? errno : EIO);
  return got;
}

class PlainReader final : public ByteReader {
 public:
  PlainReader(std::string path, FilePtr file)
      : path_(std::move(path)), file_(std::move(file)) {}

  absl::StatusOr<size_t> Read(void* out, size_t n) override {
    return ReadFile(file_.get(), path_, out, n);
  }
  const std::string& path() const override { return path_; }

 private:
  const std::string path_;
  FilePtr file_;
};

// Streams through zlib's inflate rather than gzread: gzread silently ignores
// trailing garbage after the last member and reports truncation only through
// gzerror, while here every such case must become an error naming the file.
class GzipReader final : public ByteReader {
 public:
  GzipReader(std::string path, FilePtr file)
      : path_(std::move(path)), file_(std::move(file)), in_(1 << 16) {}

  ~GzipReader() override {
    if (initialized_) inflateEnd(&strm_);
  }

  absl::Status Init() {
    strm_ = z_stream{};
    // 16 + MAX_WBITS: gzip wrapper only, with its CRC-32 and length checked.
    if (inflateInit2(&strm_, 16 + MAX_WBITS) != Z_OK) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path_, ": cannot initialize zlib"));
    }
    initialized_ = true;
    return absl::OkStatus();
  }

  absl::StatusOr<size_t> Read(void* out, size_t n) override {
    // zlib counts in uInt, so larger requests go in pieces.
    size_t total = 0;
    while (total < n) {
      const size_t piece = std::min<size_t>(n - total, UINT32_MAX);
      absl::StatusOr<size_t> got =
          ReadSome(static_cast<Bytef*>(out) + total, static_cast<uInt>(piece));
      if (!got.ok()) return got.status();
      total += *got;
      if (*got < piece) break;  // The end of the data.
    }
    return total;
  }

  const std::string& path() const override { return path_; }

 private:
  absl::StatusOr<size_t> ReadSome(Bytef* out, uInt want) {
    if (!error_.ok()) return error_;
    if (done_ || want == 0) return 0;
    strm_.next_out = out;
    strm_.avail_out = want;
    while (strm_.avail_out > 0) {
      if (strm_.avail_in == 0) {
        if (absl::Status s = Refill(); !s.ok()) return Fail(s);
        if (strm_.avail_in == 0) {
          if (in_member_) {
            return Fail(absl::DataLossError(absl::StrCat(
                path_, InNewMember() ? ": trailing garbage after gzip data"
                                     : ": truncated gzip stream")));
          }
          done_ = true;
          break;
        }
      }
      if (!in_member_) {
        // Input remains after a member: RFC 1952 allows another member.
        inflateReset(&strm_);
        in_member_ = true;
        ++members_;
      }
      const int rc = inflate(&strm_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        in_member_ = false;
      } else if (rc == Z_MEM_ERROR) {
        return Fail(absl::ResourceExhaustedError(
            absl::StrCat(path_, ": out of memory in zlib")));
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        // Z_BUF_ERROR only means "no progress": more input is needed, which
        // the loop fetches. Anything else is a malformed stream.
        return Fail(absl::DataLossError(absl::StrCat(
            path_,
            InNewMember() ? ": trailing garbage after gzip data"
                          : ": corrupt gzip data",
            " (zlib: ", strm_.msg != nullptr ? strm_.msg : "error", ")")));
      }
    }
    return static_cast<size_t>(want - strm_.avail_out);
  }

  // Whether a member after the first has produced nothing yet: bytes that
  // fail there are not a damaged member but junk appended to the file.
  // (inflateReset zeroes total_out, so it counts this member only.)
  bool InNewMember() const { return members_ > 1 && strm_.total_out == 0; }

  absl::Status Refill() {
    if (file_eof_) return absl::OkStatus();
    absl::StatusOr<size_t> got =
        ReadFile(file_.get(), path_, in_.data(), in_.size());
    if (!got.ok()) return got.status();
    if (*got < in_.size()) file_eof_ = true;
    strm_.next_in = in_.data();
    strm_.avail_in = static_cast<uInt>(*got);
    return absl::OkStatus();
  }

  // Errors are sticky: zlib's state is undefined after one.
  absl::Status Fail(absl::Status s) {
    error_ = s;
    return s;
  }

  const std::string path_;
  FilePtr file_;
  std::vector<Bytef> in_;
  z_stream strm_{};
  bool initialized_ = false;
  bool file_eof_ = false;
  bool in_member_ = false;  // Inside a member whose end was not seen yet.
  bool done_ = false;
  int members_ = 0;
  absl::Status error_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ByteReader>> OpenMaybeGzip(
    const std::string& path) {
  errno = 0;
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) {
    return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot open"));
  }
  unsigned char magic[2] = {0, 0};
  absl::StatusOr<size_t> got = ReadFile(file.get(), path, magic, 2);
  if (!got.ok()) return got.status();
  if (std::fseek(file.get(), 0, SEEK_SET) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot seek"));
  }
  if (*got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    auto reader = std::make_unique<GzipReader>(path, std::move(file));
    if (absl::Status s = reader->Init(); !s.ok()) return s;
    return std::unique_ptr<ByteReader>(std::move(reader));
  }
  return std::unique_ptr<ByteReader>(
      std::make_unique<PlainReader>(path, std::move(file)));
}

}  // namespace ringleader
