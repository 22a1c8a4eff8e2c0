#ifndef RINGLEADER_COMMON_TLS_CREDENTIALS_H_
#define RINGLEADER_COMMON_TLS_CREDENTIALS_H_

// gRPC credentials from PEM files named by flags, shared by the coordinator,
// the worker and ringctl. With no file named, everything stays insecure (the
// loopback default). Errors name the flag and the file.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace ringleader {

// The client side of a channel to the coordinator.
struct ClientTlsFiles {
  // CA bundle that signed the coordinator's certificate (--tls_ca). Set, the
  // channel is TLS.
  std::string ca;
  // This client's certificate and key (--tls_cert, --tls_key): mutual TLS,
  // which workers need when the coordinator has a --tls_client_ca. Both or
  // neither; they require --tls_ca.
  std::string cert;
  std::string key;

  bool tls() const { return !ca.empty() || !cert.empty() || !key.empty(); }
};

// Insecure credentials when no file is named, else TLS ones.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
MakeChannelCredentials(const ClientTlsFiles& files);

// The coordinator's side.
struct ServerTlsFiles {
  // Its certificate chain and key (--tls_cert, --tls_key). Both or neither.
  std::string cert;
  std::string key;
  // CA that signs the workers' client certificates (--tls_client_ca); needs
  // cert and key. A client certificate, when one is presented, must verify
  // against it, else the handshake fails; whether a call needs one at all is
  // decided per method (coordinator/server/call_auth.h).
  std::string client_ca;

  bool tls() const { return !cert.empty() || !key.empty(); }
};

// Insecure credentials when no file is named, else TLS ones.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsFiles& files);

// A bearer token from a file (--auth_token_file, --token_file): its contents
// without surrounding whitespace; an empty or unreadable file is an error.
absl::StatusOr<std::string> ReadTokenFile(absl::string_view flag,
                                          const std::string& path);

// Whether the two strings are equal, in time that depends only on their
// lengths (a token check must not tell an attacker how much of it matched).
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_TLS_CREDENTIALS_H_
