#include "worker/comm/gloo_kv_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gloo/common/error.h"

namespace ringleader {

GlooKvStore::GlooKvStore(KvClient* kv, std::string prefix,
                         absl::Duration default_timeout)
    : kv_(kv), prefix_(std::move(prefix)), default_timeout_(default_timeout) {}

std::vector<std::string> GlooKvStore::Prefixed(
    const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const std::string& k : keys) out.push_back(prefix_ + k);
  return out;
}

void GlooKvStore::Fail(const absl::Status& s) {
  {
    absl::MutexLock lock(&mu_);
    if (first_error_.ok()) first_error_ = s;
  }
  throw ::gloo::IoException(
      absl::StrCat("ringleader kv store: ", s.ToString()));
}

absl::Status GlooKvStore::first_error() const {
  absl::MutexLock lock(&mu_);
  return first_error_;
}

void GlooKvStore::set(const std::string& key, const std::vector<char>& data) {
  absl::Status s =
      kv_->Set(prefix_ + key, std::string(data.begin(), data.end()));
  if (!s.ok()) {
    Fail(absl::Status(s.code(),
                      absl::StrCat("set '", prefix_, key, "': ", s.message())));
  }
}

std::vector<char> GlooKvStore::get(const std::string& key) {
  absl::StatusOr<std::vector<std::string>> values =
      kv_->Wait({prefix_ + key}, default_timeout_);
  if (!values.ok()) {
    Fail(absl::Status(
        values.status().code(),
        absl::StrCat("get '", prefix_, key, "': ", values.status().message())));
  }
  const std::string& v = values->front();
  return std::vector<char>(v.begin(), v.end());
}

void GlooKvStore::wait(const std::vector<std::string>& keys) {
  wait(keys, ::gloo::kNoTimeout);
}

void GlooKvStore::wait(const std::vector<std::string>& keys,
                       const std::chrono::milliseconds& timeout) {
  const absl::Duration t = timeout == ::gloo::kNoTimeout
                               ? default_timeout_
                               : absl::FromChrono(timeout);
  absl::StatusOr<std::vector<std::string>> values =
      kv_->Wait(Prefixed(keys), t);
  if (!values.ok()) {
    Fail(absl::Status(
        values.status().code(),
        absl::StrCat("wait for '", prefix_, absl::StrJoin(keys, "', '"),
                     "': ", values.status().message())));
  }
}

}  // namespace ringleader
