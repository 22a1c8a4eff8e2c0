#include "common/tls_credentials.h"

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ringleader {
namespace {

// PEM and token files are small; anything bigger is not one.
constexpr std::streamsize kMaxFileBytes = 1 << 20;

absl::StatusOr<std::string> ReadFile(absl::string_view flag,
                                     const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": cannot read ", path));
  }
  std::string data(kMaxFileBytes + 1, '\0');
  in.read(data.data(), kMaxFileBytes + 1);
  if (in.bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": cannot read ", path));
  }
  data.resize(static_cast<size_t>(in.gcount()));
  if (data.size() > static_cast<size_t>(kMaxFileBytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " is over 1 MiB"));
  }
  if (data.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " is empty"));
  }
  return data;
}

absl::StatusOr<std::string> ReadPem(absl::string_view flag,
                                    const std::string& path) {
  absl::StatusOr<std::string> pem = ReadFile(flag, path);
  if (pem.ok() && pem->find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " is not a PEM file"));
  }
  return pem;
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
MakeChannelCredentials(const ClientTlsFiles& files) {
  if (!files.tls()) return grpc::InsecureChannelCredentials();
  if (files.ca.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert/--tls_key need --tls_ca (the CA of the coordinator's "
        "certificate)");
  }
  if (files.cert.empty() != files.key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  grpc::SslCredentialsOptions options;
  absl::StatusOr<std::string> ca = ReadPem("--tls_ca", files.ca);
  if (!ca.ok()) return ca.status();
  options.pem_root_certs = *std::move(ca);
  if (!files.cert.empty()) {
    absl::StatusOr<std::string> cert = ReadPem("--tls_cert", files.cert);
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadPem("--tls_key", files.key);
    if (!key.ok()) return key.status();
    options.pem_cert_chain = *std::move(cert);
    options.pem_private_key = *std::move(key);
  }
  return grpc::SslCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsFiles& files) {
  if (!files.tls()) {
    if (!files.client_ca.empty()) {
      return absl::InvalidArgumentError(
          "--tls_client_ca needs --tls_cert and --tls_key");
    }
    return grpc::InsecureServerCredentials();
  }
  if (files.cert.empty() || files.key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  absl::StatusOr<std::string> cert = ReadPem("--tls_cert", files.cert);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem("--tls_key", files.key);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  options.pem_key_cert_pairs.push_back({*std::move(key), *std::move(cert)});
  if (!files.client_ca.empty()) {
    absl::StatusOr<std::string> ca =
        ReadPem("--tls_client_ca", files.client_ca);
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *std::move(ca);
    // Not REQUIRE: ringctl connects without a client certificate and is
    // authenticated by its bearer token; WorkerService calls without a
    // verified certificate are refused per call (coordinator/server/call_auth.h).
    options.client_certificate_request =
        GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::string> ReadTokenFile(absl::string_view flag,
                                          const std::string& path) {
  absl::StatusOr<std::string> data = ReadFile(flag, path);
  if (!data.ok()) return data.status();
  std::string token(absl::StripAsciiWhitespace(*data));
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " holds no token"));
  }
  return token;
}

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  volatile unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = diff | static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

}  // namespace ringleader
