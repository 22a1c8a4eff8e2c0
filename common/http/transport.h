#ifndef RINGLEADER_COMMON_HTTP_TRANSPORT_H_
#define RINGLEADER_COMMON_HTTP_TRANSPORT_H_

// One connection's bytes without blocking, over plain TCP or TLS
// (OpenSSL, as httplib's HTTPS was): the connection loop
// (connection_loop.h) drives many of them from one thread, so each call
// does what the socket allows now and says what it waits for.

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace ringleader::http {

struct Io {
  enum class Kind {
    kDone,       // `n` bytes moved (Handshake: finished).
    kWantRead,   // Call again once the socket is readable.
    kWantWrite,  // ... writable.
    kClosed,     // The peer closed (a read of 0).
    kError,
  };
  Kind kind = Kind::kDone;
  size_t n = 0;
};

// Does not own the socket: the loop closes it.
class Transport {
 public:
  virtual ~Transport() = default;
  // kDone once the connection can carry bytes (at once for plain TCP).
  virtual Io Handshake() = 0;
  virtual Io Read(char* buf, size_t size) = 0;
  virtual Io Write(const char* buf, size_t size) = 0;
  // Best effort, never waits: TLS's close_notify.
  virtual void Shutdown() {}
};

std::unique_ptr<Transport> PlainTransport(int fd);

// A server certificate and key, loaded once; Wrap() makes one connection's
// TLS transport (the server side of the handshake).
class TlsContext {
 public:
  // INVALID_ARGUMENT naming the files when either cannot be read or the key
  // does not match the certificate.
  static absl::StatusOr<std::unique_ptr<TlsContext>> FromFiles(
      const std::string& cert_chain, const std::string& key);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // Null when OpenSSL cannot make a session (out of memory).
  std::unique_ptr<Transport> Wrap(int fd);

 private:
  explicit TlsContext(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

}  // namespace ringleader::http

#endif  // RINGLEADER_COMMON_HTTP_TRANSPORT_H_
