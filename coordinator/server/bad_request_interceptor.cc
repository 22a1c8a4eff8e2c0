#include "coordinator/server/bad_request_interceptor.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "grpcpp/support/interceptor.h"
#include "grpcpp/support/status.h"

namespace ringleader {
namespace {

using grpc::experimental::InterceptionHookPoints;

class BadRequestInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit BadRequestInterceptor(grpc::experimental::ServerRpcInfo* info)
      : method_(info->method() != nullptr ? info->method() : ""),
        // A client stream's end is also a null message: only methods with
        // one request (all of ringleader.v1's) can tell it from bad bytes.
        single_request_(
            info->type() == grpc::experimental::ServerRpcInfo::Type::UNARY ||
            info->type() ==
                grpc::experimental::ServerRpcInfo::Type::SERVER_STREAMING) {}

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    // The server hands interceptors the parsed request; it is null exactly
    // when parsing failed.
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() == nullptr && single_request_) {
      unparsable_ = true;
    }
    if (unparsable_ && methods->QueryInterceptionHookPoint(
                           InterceptionHookPoints::PRE_SEND_STATUS)) {
      methods->ModifySendStatus(grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat(method_,
                       ": the request does not parse as this method's "
                       "message (corrupt bytes, or a string field that is "
                       "not UTF-8)")));
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  const bool single_request_;
  bool unparsable_ = false;
};

class Factory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    // Streaming calls cannot tell bad bytes from a stream's end, and
    // interception costs every message of a long-lived stream: skip them.
    if (info->type() != grpc::experimental::ServerRpcInfo::Type::UNARY &&
        info->type() !=
            grpc::experimental::ServerRpcInfo::Type::SERVER_STREAMING) {
      return nullptr;
    }
    return new BadRequestInterceptor(info);
  }
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewBadRequestInterceptorFactory() {
  return std::make_unique<Factory>();
}

}  // namespace ringleader
