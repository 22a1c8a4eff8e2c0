#include "common/http/buffered_server.h"

#include <algorithm>
#include <cstring>

namespace ringleader::http {
namespace {

// Reads from the request's bytes, writes to the response's.
class BufferStream : public httplib::Stream {
 public:
  BufferStream(absl::string_view in, std::string* out, const std::string& ip,
               int port)
      : in_(in), out_(out), ip_(ip), port_(port) {}

  bool is_readable() const override { return !in_.empty(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, in_.size());
    std::memcpy(ptr, in_.data(), n);
    in_.remove_prefix(n);
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out_->append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = ip_;
    port = port_;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip.clear();
    port = 0;
  }
  // No socket: httplib's select()-based build answers 500 for a socket
  // number at or past FD_SETSIZE, which a loop holding a thousand
  // connections reaches.
  socket_t socket() const override { return INVALID_SOCKET; }

 private:
  absl::string_view in_;
  std::string* const out_;
  const std::string ip_;
  const int port_;
};

}  // namespace

std::string BufferedServer::Respond(absl::string_view request,
                                    const std::string& peer_ip, int peer_port) {
  std::string response;
  BufferStream stream(request, &response, peer_ip, peer_port);
  bool closed = false;
  process_request(stream, /*close_connection=*/true, closed, nullptr);
  return response;
}

}  // namespace ringleader::http
