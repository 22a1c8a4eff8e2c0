#include "worker/comm/grpc_kv_client.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/grpc_status.h"

namespace ringleader {
namespace {

void SetDeadline(grpc::ClientContext* ctx, absl::Duration timeout) {
  ctx->set_deadline(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(timeout));
}

}  // namespace

GrpcKvClient::GrpcKvClient(std::shared_ptr<grpc::Channel> channel,
                           std::string job_id, int64_t generation,
                           Options options)
    : stub_(v1::WorkerService::NewStub(std::move(channel))),
      job_id_(std::move(job_id)),
      generation_(generation),
      options_(options) {}

absl::Status GrpcKvClient::Set(const std::string& key,
                               const std::string& value) {
  v1::KvSetRequest req;
  req.set_job_id(job_id_);
  req.set_generation(generation_);
  req.set_key(key);
  req.set_value(value);
  v1::KvSetResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx, options_.rpc_timeout);
  return FromGrpcStatus(stub_->KvSet(&ctx, req, &resp), "KvSet");
}

absl::StatusOr<std::vector<std::string>> GrpcKvClient::Wait(
    const std::vector<std::string>& keys, absl::Duration timeout) {
  const int64_t timeout_ms =
      std::max<int64_t>(1, absl::ToInt64Milliseconds(timeout));
  v1::KvWaitRequest req;
  req.set_job_id(job_id_);
  req.set_generation(generation_);
  for (const std::string& k : keys) req.add_keys(k);
  req.set_timeout_ms(timeout_ms);
  v1::KvWaitResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx, absl::Milliseconds(timeout_ms) + options_.wait_slack);
  if (absl::Status s =
          FromGrpcStatus(stub_->KvWait(&ctx, req, &resp), "KvWait");
      !s.ok()) {
    return s;
  }
  if (resp.values_size() != static_cast<int>(keys.size())) {
    return absl::InternalError(absl::StrCat("KvWait: asked for ", keys.size(),
                                            " keys, got ", resp.values_size(),
                                            " values"));
  }
  return std::vector<std::string>(resp.values().begin(), resp.values().end());
}

absl::StatusOr<std::optional<std::string>> GrpcKvClient::Get(
    const std::string& key) {
  v1::KvGetRequest req;
  req.set_job_id(job_id_);
  req.set_generation(generation_);
  req.set_key(key);
  v1::KvGetResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx, options_.rpc_timeout);
  if (absl::Status s = FromGrpcStatus(stub_->KvGet(&ctx, req, &resp), "KvGet");
      !s.ok()) {
    return s;
  }
  if (!resp.found()) return std::optional<std::string>();
  return std::optional<std::string>(std::move(*resp.mutable_value()));
}

absl::StatusOr<int64_t> GrpcKvClient::Add(const std::string& key,
                                          int64_t delta) {
  v1::KvAddRequest req;
  req.set_job_id(job_id_);
  req.set_generation(generation_);
  req.set_key(key);
  req.set_delta(delta);
  v1::KvAddResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx, options_.rpc_timeout);
  if (absl::Status s = FromGrpcStatus(stub_->KvAdd(&ctx, req, &resp), "KvAdd");
      !s.ok()) {
    return s;
  }
  return resp.value();
}

}  // namespace ringleader
