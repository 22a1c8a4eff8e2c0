#include "coordinator/log_store.h"

#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader {
namespace {

// What a line costs beyond its strings' bytes, so that the limits bound the
// coordinator's memory and not only the text (a flood of 100-byte lines
// took 3x the text's bound when this was 64): the message itself, its four
// strings (each a std::string protobuf allocates on the heap), the heap
// buffers of the two that outgrow the small-string buffer (text, worker
// id), and malloc's header on each allocation.
constexpr int64_t kMallocHeader = 16;
constexpr int64_t kLineOverhead =
    static_cast<int64_t>(sizeof(v1::LogLine)) +
    4 * (static_cast<int64_t>(sizeof(std::string)) + kMallocHeader) +
    2 * kMallocHeader;

bool EarlierLine(const v1::LogLine& a, const v1::LogLine& b) {
  return std::make_tuple(a.time_ms(), a.rank(), a.seq()) <
         std::make_tuple(b.time_ms(), b.rank(), b.seq());
}

}  // namespace

int64_t LogStore::Cost(const v1::LogLine& line) {
  return kLineOverhead +
         static_cast<int64_t>(line.text().size() + line.host().size() +
                              line.worker_id().size() + line.severity().size());
}

void LogStore::Admit(const std::string& job_id, const std::string& worker_id) {
  absl::MutexLock lock(&mu_);
  jobs_[job_id].admitted.insert(worker_id);
}

bool LogStore::Admitted(const std::string& job_id,
                        const std::string& worker_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  return it != jobs_.end() && it->second.admitted.count(worker_id) > 0;
}

void LogStore::Append(const std::string& job_id, const std::string& worker_id,
                      const std::string& host, std::vector<v1::LogLine> lines,
                      int64_t dropped) {
  absl::MutexLock lock(&mu_);
  JobLog& log = jobs_[job_id];
  log.touched = ++clock_;
  if (dropped > 0) {
    // Said where it happened: before the first line that made it through.
    v1::LogLine note;
    if (!lines.empty()) {
      note.set_time_ms(lines.front().time_ms());
      note.set_rank(lines.front().rank());
      note.set_generation(lines.front().generation());
    }
    note.set_severity("WARNING");
    note.set_text(absl::StrCat("[ringleader: ", dropped,
                               " lines of this worker were dropped: its queue "
                               "was full while the coordinator was away]"));
    note.set_worker_id(worker_id);
    note.set_host(host);
    AddLocked(log, std::move(note));
  }
  for (v1::LogLine& line : lines) {
    line.set_worker_id(worker_id);
    line.set_host(host);
    AddLocked(log, std::move(line));
  }
  EvictLocked(job_id);
}

void LogStore::AddLocked(JobLog& log, v1::LogLine line) {
  line.set_seq(++log.last_seq);
  const int32_t rank = std::max(line.rank(), -1);
  Ring& ring = log.ranks[rank];
  const int64_t cost = Cost(line);
  ring.bytes += cost;
  log.bytes += cost;
  bytes_ += cost;
  ring.lines.push_back(std::move(line));
  TrimLocked(log, ring);
}

void LogStore::PopOldestLocked(JobLog& log, Ring& ring) {
  const int64_t cost = Cost(ring.lines.front());
  ring.bytes -= cost;
  log.bytes -= cost;
  bytes_ -= cost;
  ring.lines.pop_front();
}

void LogStore::TrimLocked(JobLog& log, Ring& ring) {
  while (!ring.lines.empty() &&
         (static_cast<int64_t>(ring.lines.size()) > limits_.lines_per_rank ||
          ring.bytes > limits_.bytes_per_rank)) {
    PopOldestLocked(log, ring);
  }
}

void LogStore::EvictLocked(const std::string& keep) {
  while (bytes_ > limits_.total_bytes) {
    auto oldest = jobs_.end();
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
      if (it->first == keep || it->second.bytes == 0) continue;
      if (oldest == jobs_.end() || it->second.touched < oldest->second.touched)
        oldest = it;
    }
    if (oldest != jobs_.end()) {
      // The admissions stay: the job's workers may still append.
      bytes_ -= oldest->second.bytes;
      oldest->second.bytes = 0;
      oldest->second.ranks.clear();
      continue;
    }
    // Only `keep` holds lines: its largest ring loses its oldest line.
    JobLog& log = jobs_[keep];
    auto largest = log.ranks.end();
    for (auto it = log.ranks.begin(); it != log.ranks.end(); ++it) {
      if (largest == log.ranks.end() ||
          it->second.bytes > largest->second.bytes)
        largest = it;
    }
    if (largest == log.ranks.end() || largest->second.lines.empty()) return;
    PopOldestLocked(log, largest->second);
  }
}

LogStore::Page LogStore::Read(const std::string& job_id,
                              const Query& query) const {
  Page page;
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return page;
  page.last_seq = it->second.last_seq;
  for (const auto& [rank, ring] : it->second.ranks) {
    if (query.rank.has_value() && *query.rank != rank) continue;
    for (const v1::LogLine& line : ring.lines) {
      if (line.seq() > query.after_seq && line.time_ms() >= query.since_ms)
        page.lines.push_back(line);
    }
  }
  std::sort(page.lines.begin(), page.lines.end(), EarlierLine);
  size_t first = 0;
  if (query.tail > 0 && page.lines.size() > static_cast<size_t>(query.tail))
    first = page.lines.size() - query.tail;
  // The newest lines that fit max_bytes.
  int64_t bytes = 0;
  size_t keep_from = page.lines.size();
  while (keep_from > first) {
    const int64_t cost = Cost(page.lines[keep_from - 1]);
    if (bytes + cost > query.max_bytes) break;
    bytes += cost;
    --keep_from;
  }
  page.omitted = static_cast<int64_t>(keep_from - first);
  page.lines.erase(page.lines.begin(), page.lines.begin() + keep_from);
  return page;
}

void LogStore::Delete(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  bytes_ -= it->second.bytes;
  jobs_.erase(it);
}

int64_t LogStore::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

}  // namespace ringleader
