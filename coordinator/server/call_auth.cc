#include "coordinator/server/call_auth.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/tls_credentials.h"

namespace ringleader {
namespace {

constexpr absl::string_view kBearer = "Bearer ";
constexpr absl::string_view kWorkerServicePrefix =
    "/ringleader.v1.WorkerService/";

class WorkerCertProcessor final : public grpc::AuthMetadataProcessor {
 public:
  bool IsBlocking() const override { return false; }

  grpc::Status Process(const InputMetadata& metadata,
                       grpc::AuthContext* context, OutputMetadata*,
                       OutputMetadata*) override {
    auto path = metadata.find(":path");
    if (path == metadata.end()) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "the call names no method");
    }
    const absl::string_view method(path->second.data(), path->second.size());
    if (!absl::StartsWith(method, kWorkerServicePrefix)) {
      return grpc::Status::OK;
    }
    // With GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY a presented
    // certificate has been verified by the handshake; the peer has an
    // identity exactly when it presented one.
    if (context != nullptr && context->IsPeerAuthenticated()) {
      return grpc::Status::OK;
    }
    return grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        absl::StrCat(method,
                     ": workers must present a client certificate signed by "
                     "the coordinator's --tls_client_ca (ringleader-worker "
                     "--tls_cert and --tls_key)"));
  }
};

}  // namespace

absl::Status BearerTokenCheck::Check(const grpc::ServerContextBase& ctx,
                                     absl::string_view method) const {
  if (token_.empty()) return absl::OkStatus();
  const auto& md = ctx.client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) {
    return absl::UnauthenticatedError(absl::StrCat(
        method,
        " needs a bearer token: give ringctl --token, --token_file or "
        "$RINGLEADER_TOKEN"));
  }
  const absl::string_view value(it->second.data(), it->second.size());
  if (!absl::StartsWith(value, kBearer)) {
    return absl::UnauthenticatedError(absl::StrCat(
        method, ": the authorization metadata is not \"Bearer <token>\""));
  }
  if (!ConstantTimeEquals(value.substr(kBearer.size()), token_)) {
    return absl::UnauthenticatedError(
        absl::StrCat(method, ": the bearer token is not the coordinator's"));
  }
  return absl::OkStatus();
}

std::shared_ptr<grpc::AuthMetadataProcessor> NewWorkerCertProcessor() {
  return std::make_shared<WorkerCertProcessor>();
}

}  // namespace ringleader
