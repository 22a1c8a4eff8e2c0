#include "worker/comm/grpc_kv_client.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/grpc_status.h"

namespace ringleader {

std::unique_ptr<grpc::ClientContext> GrpcKvClient::Ctx(
    absl::Duration timeout) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(timeout));
  AttachWorkerCredential(ctx.get(), options_.credential);
  return ctx;
}

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
  std::unique_ptr<grpc::ClientContext> ctx = Ctx(options_.rpc_timeout);
  return FromGrpcStatus(stub_->KvSet(ctx.get(), req, &resp), "KvSet");
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
  std::unique_ptr<grpc::ClientContext> ctx =
      Ctx(absl::Milliseconds(timeout_ms) + options_.wait_slack);
  if (absl::Status s =
          FromGrpcStatus(stub_->KvWait(ctx.get(), req, &resp), "KvWait");
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
  std::unique_ptr<grpc::ClientContext> ctx = Ctx(options_.rpc_timeout);
  if (absl::Status s =
          FromGrpcStatus(stub_->KvGet(ctx.get(), req, &resp), "KvGet");
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
  std::unique_ptr<grpc::ClientContext> ctx = Ctx(options_.rpc_timeout);
  if (absl::Status s =
          FromGrpcStatus(stub_->KvAdd(ctx.get(), req, &resp), "KvAdd");
      !s.ok()) {
    return s;
  }
  return resp.value();
}

}  // namespace ringleader
