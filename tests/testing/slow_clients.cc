#include "tests/testing/slow_clients.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ringleader::testing {
namespace {

// A request that never ends: its head grows by a header line at a time
// and never reaches the blank line.
std::string EndlessRequest() {
  std::string s = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
  while (s.size() < 60000) s += "X-Pad: 0123456789\r\n";
  return s;
}

// A TLS handshake record (type 22, TLS 1.0 record version) announcing 512
// bytes of ClientHello, the start of one (type 1, 508 bytes, TLS 1.2), then
// zeros: a server reads it to the record's end before it can judge it.
std::string EndlessClientHello() {
  std::string s("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11);
  s.resize(5 + 512 - 1, '\0');  // One byte short of the record.
  return s;
}

absl::StatusOr<int> Connect(int port, const std::string& source) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return absl::UnavailableError(
        absl::StrCat("connect from ", source, ": ", why));
  }
  return fd;
}

}  // namespace

SlowClients::~SlowClients() {
  for (const Conn& c : conns_) ::close(c.fd);
}

const std::string& SlowClients::Bytes() const {
  static const std::string* http = new std::string(EndlessRequest());
  static const std::string* tls = new std::string(EndlessClientHello());
  return tls_ ? *tls : *http;
}

absl::Status SlowClients::Open(int port, int n,
                               const std::vector<std::string>& sources,
                               bool tls) {
  tls_ = tls;
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<int> fd = Connect(port, sources[i % sources.size()]);
    if (!fd.ok()) return fd.status();
    const Kind kind = static_cast<Kind>(i % 3);
    const size_t first = kind == Kind::kIdle       ? 0
                         : kind == Kind::kHalfSent ? 20
                                                   : 1;
    // Into the socket's buffer: never blocks for a few bytes. A server
    // that closed it at once makes this fail, which StillOpen() counts.
    if (first > 0) ::send(*fd, Bytes().data(), first, MSG_NOSIGNAL);
    conns_.push_back({*fd, kind, first});
  }
  return absl::OkStatus();
}

void SlowClients::Trickle() {
  for (Conn& c : conns_) {
    if (c.kind != Kind::kTrickling || c.sent >= Bytes().size()) continue;
    if (::send(c.fd, Bytes().data() + c.sent, 1, MSG_NOSIGNAL) == 1) ++c.sent;
  }
}

int SlowClients::StillOpen() const {
  int open = 0;
  for (const Conn& c : conns_) {
    pollfd p{c.fd, POLLIN, 0};
    // Readable with nothing to read, or an error: the server closed it.
    if (::poll(&p, 1, 0) == 0) ++open;
  }
  return open;
}

long ResidentBytes(int pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    long kb = 0;
    std::string digits;
    for (char ch : line) {
      if (ch >= '0' && ch <= '9') digits += ch;
    }
    return absl::SimpleAtoi(digits, &kb) ? kb * 1024 : 0;
  }
  return 0;
}

}  // namespace ringleader::testing
