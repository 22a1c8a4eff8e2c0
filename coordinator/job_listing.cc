#include "coordinator/job_listing.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ringleader {
namespace {

// Names the token format, so that a token of another version or of another
// service's listing is told apart from one of ours.
constexpr char kTokenTag[] = "jobs1";

// The filter as the token records it: sorted, duplicates dropped, so that
// the same set of states in another order matches.
std::string FilterFingerprint(const std::vector<v1::JobState>& states) {
  std::vector<int> sorted(states.begin(), states.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  return absl::StrJoin(sorted, ",");
}

// What Submit makes ids of (a name of [a-z0-9-], a dash, a number).
bool IsJobId(absl::string_view id) {
  if (id.empty()) return false;
  for (char c : id) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '-') {
      return false;
    }
  }
  return true;
}

absl::Status BadToken() {
  return absl::InvalidArgumentError(
      "page_token is malformed or belongs to a listing with other states; "
      "start again without one");
}

// Cuts `s` to at most `max` bytes without splitting a UTF-8 sequence.
std::string Truncated(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

}  // namespace

JobKey JobKey::Of(const v1::Job& job) {
  JobKey key;
  key.create_time_ms = job.create_time_ms();
  key.job_id = job.job_id();
  const size_t dash = key.job_id.rfind('-');
  if (dash != std::string::npos &&
      !absl::SimpleAtoi(absl::string_view(key.job_id).substr(dash + 1),
                        &key.sequence)) {
    key.sequence = 0;  // Not an id Submit made: ordered by id alone.
  }
  return key;
}

absl::StatusOr<int32_t> EffectivePageSize(int32_t page_size) {
  if (page_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size must not be negative, got ", page_size));
  }
  if (page_size == 0) return kDefaultJobPageSize;
  return std::min(page_size, kMaxJobPageSize);
}

std::string EncodePageToken(const std::vector<v1::JobState>& states,
                            const JobKey& last) {
  // Job ids are [a-z0-9-] and the fingerprint digits and commas: '|' is
  // free to separate them.
  return absl::WebSafeBase64Escape(
      absl::StrCat(kTokenTag, "|", FilterFingerprint(states), "|",
                   last.create_time_ms, "|", last.job_id));
}

absl::StatusOr<JobKey> DecodePageToken(const std::vector<v1::JobState>& states,
                                       const std::string& token) {
  std::string raw;
  if (!absl::WebSafeBase64Unescape(token, &raw)) return BadToken();
  const std::vector<std::string> parts = absl::StrSplit(raw, '|');
  int64_t create_time_ms = 0;
  if (parts.size() != 4 || parts[0] != kTokenTag ||
      parts[1] != FilterFingerprint(states) ||
      !absl::SimpleAtoi(parts[2], &create_time_ms) || !IsJobId(parts[3])) {
    return BadToken();
  }
  v1::Job probe;
  probe.set_create_time_ms(create_time_ms);
  probe.set_job_id(parts[3]);
  return JobKey::Of(probe);
}

v1::Job JobSummary(const v1::Job& job) {
  v1::Job out;
  out.set_job_id(job.job_id());
  out.set_state(job.state());
  out.set_generation(job.generation());
  out.set_world_size(job.world_size());
  out.set_restarts(job.restarts());
  out.set_message(Truncated(job.message(), kSummaryMessageBytes));
  out.set_create_time_ms(job.create_time_ms());
  out.set_update_time_ms(job.update_time_ms());
  // A whitelist, not a blacklist: a string or list added to the spec later
  // stays out of listings until someone decides it is light.
  const v1::JobSpec& spec = job.spec();
  v1::JobSpec* s = out.mutable_spec();
  s->set_name(spec.name());
  s->set_epochs(spec.epochs());
  s->set_batch_size(spec.batch_size());
  s->set_min_workers(spec.min_workers());
  s->set_max_workers(spec.max_workers());
  s->set_max_restarts(spec.max_restarts());
  s->set_device(spec.device());
  s->set_resume(spec.resume());
  const v1::JobProgress& p = job.progress();
  v1::JobProgress* q = out.mutable_progress();
  q->set_epoch(p.epoch());
  q->set_step(p.step());
  q->set_total_steps(p.total_steps());
  q->set_loss(p.loss());
  q->set_samples_per_sec(p.samples_per_sec());
  q->set_final_train_loss(p.final_train_loss());
  q->set_test_accuracy(p.test_accuracy());
  q->set_has_final_metrics(p.has_final_metrics());
  q->set_grad_norm(p.grad_norm());
  if (job.has_last_checkpoint()) {
    *out.mutable_last_checkpoint() = job.last_checkpoint();
    out.mutable_last_checkpoint()->clear_path();
  }
  return out;
}

}  // namespace ringleader
