#include "worker/logs/job_log_capture.h"

#include <algorithm>
#include <utility>

#include "absl/strings/string_view.h"
#include "glog/logging.h"

namespace ringleader {
namespace {

constexpr size_t kMaxLineBytes = 4096;
constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// The length of the valid UTF-8 sequence at `s` (0: not one).
size_t Utf8SequenceLength(const unsigned char* s, size_t left) {
  const unsigned char c = s[0];
  if (c < 0x80) return 1;
  size_t n;
  unsigned int min;
  if ((c & 0xE0) == 0xC0) {
    n = 2, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, min = 0x10000;
  } else {
    return 0;
  }
  if (left < n) return 0;
  unsigned int cp = c & (0x7F >> n);
  for (size_t i = 1; i < n; ++i) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

int64_t CostOf(const v1::LogLine& line) {
  return static_cast<int64_t>(line.text().size()) + 32;
}

}  // namespace

std::string JobLogCapture::CleanLine(const char* text, size_t len) {
  std::string out;
  out.reserve(std::min(len, kMaxLineBytes));
  const auto* s = reinterpret_cast<const unsigned char*>(text);
  size_t i = 0;
  while (i < len) {
    const size_t n = Utf8SequenceLength(s + i, len - i);
    const absl::string_view piece = n == 0 ? absl::string_view(kReplacement)
                                           : absl::string_view(text + i, n);
    if (out.size() + piece.size() > kMaxLineBytes - 3) {
      out.append("...");
      break;
    }
    out.append(piece.data(), piece.size());
    i += n == 0 ? 1 : n;
  }
  return out;
}

// glog's side: hands each line to its capture.
class JobLogCapture::Sink : public google::LogSink {
 public:
  explicit Sink(JobLogCapture* capture) : capture_(capture) {
    google::AddLogSink(this);
  }
  ~Sink() override { google::RemoveLogSink(this); }

  void send(google::LogSeverity severity, const char*, const char*, int,
            const google::LogMessageTime& time, const char* message,
            size_t message_len) override {
    capture_->Add(
        google::GetLogSeverityName(severity),
        int64_t{time.timestamp()} * 1000 + int64_t{time.usec()} / 1000, message,
        message_len);
  }

 private:
  JobLogCapture* const capture_;
};

JobLogCapture::JobLogCapture(Limits limits)
    : limits_(limits), sink_(std::make_unique<Sink>(this)) {}

// The sink goes first: no line arrives at a capture being destroyed.
JobLogCapture::~JobLogCapture() { sink_.reset(); }

void JobLogCapture::BeginJob(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  job_id_ = job_id;
  generation_ = 0;
  rank_ = -1;
}

void JobLogCapture::SetRank(int64_t generation, int32_t rank) {
  absl::MutexLock lock(&mu_);
  generation_ = generation;
  rank_ = rank;
}

void JobLogCapture::EndJob() {
  absl::MutexLock lock(&mu_);
  job_id_.clear();
  wake_ = true;
}

void JobLogCapture::Add(const char* severity, int64_t time_ms,
                        const char* message, size_t message_len) {
  absl::MutexLock lock(&mu_);
  if (job_id_.empty()) return;
  // A message of several lines is several lines of the log.
  absl::string_view rest(message, message_len);
  while (true) {
    const size_t end = rest.find('\n');
    const absl::string_view piece = rest.substr(0, end);
    Queued q{job_id_, {}};
    q.line.set_time_ms(time_ms);
    q.line.set_rank(rank_);
    q.line.set_generation(generation_);
    q.line.set_severity(severity);
    q.line.set_text(CleanLine(piece.data(), piece.size()));
    PushLocked(std::move(q));
    if (end == absl::string_view::npos) break;
    rest.remove_prefix(end + 1);
    if (rest.empty()) break;
  }
}

void JobLogCapture::PushLocked(Queued q) {
  bytes_ += CostOf(q.line);
  queue_.push_back(std::move(q));
  TrimLocked();
}

void JobLogCapture::TrimLocked() {
  while (static_cast<int64_t>(queue_.size()) > limits_.max_lines ||
         bytes_ > limits_.max_bytes) {
    DropOldestLocked();
  }
}

void JobLogCapture::CountDroppedLocked(const std::string& job_id, int64_t n) {
  auto it = std::find_if(dropped_.begin(), dropped_.end(),
                         [&](const auto& d) { return d.first == job_id; });
  if (it == dropped_.end()) {
    dropped_.emplace_back(job_id, n);
  } else {
    it->second += n;
  }
}

void JobLogCapture::DropOldestLocked() {
  Queued& oldest = queue_.front();
  bytes_ -= CostOf(oldest.line);
  ++dropped_total_;
  CountDroppedLocked(oldest.job_id, 1);
  queue_.pop_front();
}

std::optional<JobLogBatch> JobLogCapture::Take(int max_lines,
                                               int64_t max_bytes) {
  absl::MutexLock lock(&mu_);
  if (queue_.empty() && dropped_.empty()) return std::nullopt;
  JobLogBatch batch;
  batch.job_id =
      queue_.empty() ? dropped_.front().first : queue_.front().job_id;
  int64_t bytes = 0;
  while (!queue_.empty() && queue_.front().job_id == batch.job_id &&
         static_cast<int>(batch.lines.size()) < max_lines &&
         bytes + CostOf(queue_.front().line) <= max_bytes) {
    bytes += CostOf(queue_.front().line);
    bytes_ -= CostOf(queue_.front().line);
    batch.lines.push_back(std::move(queue_.front().line));
    queue_.pop_front();
  }
  auto it = std::find_if(dropped_.begin(), dropped_.end(), [&](const auto& d) {
    return d.first == batch.job_id;
  });
  if (it != dropped_.end()) {
    batch.dropped = it->second;
    dropped_.erase(it);
  }
  return batch;
}

void JobLogCapture::PutBack(JobLogBatch batch) {
  absl::MutexLock lock(&mu_);
  for (auto it = batch.lines.rbegin(); it != batch.lines.rend(); ++it) {
    bytes_ += CostOf(*it);
    queue_.push_front({batch.job_id, std::move(*it)});
  }
  if (batch.dropped > 0) {
    CountDroppedLocked(batch.job_id, batch.dropped);
  }
  TrimLocked();
}

void JobLogCapture::AwaitLines(int64_t min_lines, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [this, min_lines]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<int64_t>(queue_.size()) >= min_lines || wake_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  wake_ = false;
}

void JobLogCapture::Wake() {
  absl::MutexLock lock(&mu_);
  wake_ = true;
}

int64_t JobLogCapture::queued() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size());
}

int64_t JobLogCapture::dropped_total() const {
  absl::MutexLock lock(&mu_);
  return dropped_total_;
}

}  // namespace ringleader
