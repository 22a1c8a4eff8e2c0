#include "common/http/transport.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"

namespace ringleader::http {
namespace {

Io Moved(ssize_t n) {
  Io io;
  io.n = static_cast<size_t>(n);
  return io;
}

Io Of(Io::Kind kind) {
  Io io;
  io.kind = kind;
  return io;
}

// errno after a failed read or write.
Io Failed(bool reading) {
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
    return Of(reading ? Io::Kind::kWantRead : Io::Kind::kWantWrite);
  }
  return Of(Io::Kind::kError);
}

class Plain : public Transport {
 public:
  explicit Plain(int fd) : fd_(fd) {}
  Io Handshake() override { return Of(Io::Kind::kDone); }
  Io Read(char* buf, size_t size) override {
    const ssize_t n = ::recv(fd_, buf, size, 0);
    if (n > 0) return Moved(n);
    return n == 0 ? Of(Io::Kind::kClosed) : Failed(/*reading=*/true);
  }
  Io Write(const char* buf, size_t size) override {
    const ssize_t n = ::send(fd_, buf, size, MSG_NOSIGNAL);
    return n >= 0 ? Moved(n) : Failed(/*reading=*/false);
  }

 private:
  const int fd_;
};

class Tls : public Transport {
 public:
  explicit Tls(SSL* ssl) : ssl_(ssl) {}
  ~Tls() override { SSL_free(ssl_); }

  Io Handshake() override {
    const int r = SSL_do_handshake(ssl_);
    return r == 1 ? Of(Io::Kind::kDone) : Wants(r);
  }
  Io Read(char* buf, size_t size) override {
    size_t n = 0;
    const int r = SSL_read_ex(ssl_, buf, size, &n);
    if (r == 1) return Moved(static_cast<ssize_t>(n));
    return Wants(r);
  }
  Io Write(const char* buf, size_t size) override {
    size_t n = 0;
    const int r = SSL_write_ex(ssl_, buf, size, &n);
    if (r == 1) return Moved(static_cast<ssize_t>(n));
    return Wants(r);
  }
  void Shutdown() override {
    // One call: sends our close_notify without waiting for the peer's.
    SSL_shutdown(ssl_);
  }

 private:
  Io Wants(int r) {
    switch (SSL_get_error(ssl_, r)) {
      case SSL_ERROR_WANT_READ:
        return Of(Io::Kind::kWantRead);
      case SSL_ERROR_WANT_WRITE:
        return Of(Io::Kind::kWantWrite);
      case SSL_ERROR_ZERO_RETURN:
        return Of(Io::Kind::kClosed);
      default:
        ERR_clear_error();  // The thread's queue stays empty for the next.
        return Of(Io::Kind::kError);
    }
  }

  SSL* const ssl_;
};

}  // namespace

std::unique_ptr<Transport> PlainTransport(int fd) {
  return std::make_unique<Plain>(fd);
}

absl::StatusOr<std::unique_ptr<TlsContext>> TlsContext::FromFiles(
    const std::string& cert_chain, const std::string& key) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return absl::InternalError("SSL_CTX_new failed");
  std::unique_ptr<TlsContext> out(new TlsContext(ctx));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // A write may take part of the buffer, and the next call may pass the
  // rest from another address (the loop's string may move).
  SSL_CTX_set_mode(
      ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_chain.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot serve HTTPS with certificate '", cert_chain, "' and key '", key,
        "': unreadable, or the key does not match"));
  }
  return out;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

std::unique_ptr<Transport> TlsContext::Wrap(int fd) {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) return nullptr;
  if (SSL_set_fd(ssl, fd) != 1) {
    SSL_free(ssl);
    return nullptr;
  }
  SSL_set_accept_state(ssl);
  return std::make_unique<Tls>(ssl);
}

}  // namespace ringleader::http
