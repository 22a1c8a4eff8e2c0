#ifndef RINGLEADER_COORDINATOR_SERVER_BAD_REQUEST_INTERCEPTOR_H_
#define RINGLEADER_COORDINATOR_SERVER_BAD_REQUEST_INTERCEPTOR_H_

#include <memory>

#include "grpcpp/support/server_interceptor.h"

namespace ringleader {

// gRPC answers a request whose bytes do not parse as the method's message
// (corrupt bytes, a string field that is not UTF-8) with UNIMPLEMENTED and no
// message, before any service code runs, which tells the caller nothing true.
// This interceptor turns that answer into INVALID_ARGUMENT naming the method.
// It changes nothing for requests that parse.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewBadRequestInterceptorFactory();

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_SERVER_BAD_REQUEST_INTERCEPTOR_H_
