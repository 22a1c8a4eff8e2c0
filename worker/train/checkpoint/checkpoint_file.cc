#include "worker/train/checkpoint/checkpoint_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"

namespace ringleader {
namespace {

constexpr char kMagic[8] = {'R', 'L', 'C', 'K', 'P', 'T', '1', '\n'};
constexpr size_t kHeaderBytes = sizeof(kMagic) + 8 + 4;
constexpr uint64_t kMaxPayload = uint64_t{16} << 30;

absl::Status Errno(const std::string& what, const std::string& path) {
  const int e = errno;
  std::string msg = absl::StrCat(what, " ", path, ": ", std::strerror(e));
  return e == ENOENT ? absl::NotFoundError(msg) : absl::InternalError(msg);
}

void PutLe(uint64_t v, int bytes, std::string& out) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t GetLe(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint32_t Crc(const std::string& data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  size_t off = 0;
  while (off < data.size()) {
    const uInt n =
        static_cast<uInt>(std::min<size_t>(data.size() - off, 1 << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data() + off), n);
    off += n;
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace

absl::Status WriteCheckpointFile(const std::string& path,
                                 const std::string& payload) {
  std::string header(kMagic, sizeof(kMagic));
  PutLe(payload.size(), 8, header);
  PutLe(Crc(payload), 4, header);
  AtomicFile file(path);
  if (absl::Status s = file.Append(header); !s.ok()) return s;
  if (absl::Status s = file.Append(payload); !s.ok()) return s;
  return file.Commit();
}

absl::StatusOr<std::string> ReadCheckpointFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open checkpoint", path);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint ", path, " is not a regular file"));
  }
  std::string data;
  data.resize(static_cast<size_t>(st.st_size));
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::read(fd, &data[off], data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  ::close(fd);
  data.resize(off);
  auto corrupt = [&](const std::string& why) {
    return absl::DataLossError(
        absl::StrCat("checkpoint ", path, " is torn or corrupt: ", why));
  };
  if (data.size() < kHeaderBytes ||
      std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0) {
    return corrupt("bad header");
  }
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const uint64_t len = GetLe(p + sizeof(kMagic), 8);
  const uint32_t crc = static_cast<uint32_t>(GetLe(p + sizeof(kMagic) + 8, 4));
  if (len > kMaxPayload || len != data.size() - kHeaderBytes) {
    return corrupt(absl::StrCat("payload is ", data.size() - kHeaderBytes,
                                " bytes, header says ", len));
  }
  std::string payload = data.substr(kHeaderBytes);
  if (Crc(payload) != crc) return corrupt("checksum mismatch");
  return payload;
}

}  // namespace ringleader
