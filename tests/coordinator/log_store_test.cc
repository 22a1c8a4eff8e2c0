#include "coordinator/log_store.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

v1::LogLine Line(int64_t time_ms, int32_t rank, const std::string& text) {
  v1::LogLine line;
  line.set_time_ms(time_ms);
  line.set_rank(rank);
  line.set_generation(1);
  line.set_severity("INFO");
  line.set_text(text);
  return line;
}

std::vector<std::string> Texts(const LogStore::Page& page) {
  std::vector<std::string> out;
  for (const v1::LogLine& line : page.lines) out.push_back(line.text());
  return out;
}

TEST(LogStoreTest, LinesComeInTimeOrderAcrossRanksStampedWithTheirWorker) {
  LogStore store({});
  store.Append("job", "w0", "h0", {Line(10, 0, "a"), Line(30, 0, "c")}, 0);
  store.Append("job", "w1", "h1", {Line(20, 1, "b"), Line(30, 1, "d")}, 0);
  const LogStore::Page page = store.Read("job", {});
  EXPECT_EQ(Texts(page), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(page.last_seq, 4);
  EXPECT_EQ(page.lines[1].host(), "h1");
  EXPECT_EQ(page.lines[1].worker_id(), "w1");
  EXPECT_EQ(page.omitted, 0);
}

TEST(LogStoreTest, ARankSinceTailAndCursorSelect) {
  LogStore store({});
  store.Append("job", "w0", "h", {Line(10, 0, "a0"), Line(20, 0, "b0")}, 0);
  store.Append("job", "w1", "h", {Line(15, 1, "a1"), Line(25, 1, "b1")}, 0);
  LogStore::Query rank1;
  rank1.rank = 1;
  EXPECT_EQ(Texts(store.Read("job", rank1)),
            (std::vector<std::string>{"a1", "b1"}));
  LogStore::Query since;
  since.since_ms = 20;
  EXPECT_EQ(Texts(store.Read("job", since)),
            (std::vector<std::string>{"b0", "b1"}));
  LogStore::Query tail;
  tail.tail = 3;
  EXPECT_EQ(Texts(store.Read("job", tail)),
            (std::vector<std::string>{"a1", "b0", "b1"}));
  LogStore::Query after;
  after.after_seq = 2;  // The first worker's two lines were 1 and 2.
  EXPECT_EQ(Texts(store.Read("job", after)),
            (std::vector<std::string>{"a1", "b1"}));
  EXPECT_TRUE(store.Read("other", {}).lines.empty());
}

TEST(LogStoreTest, EachRankKeepsItsLastLinesWithinItsLimits) {
  LogStore::Limits limits;
  limits.lines_per_rank = 3;
  LogStore store(limits);
  for (int i = 0; i < 5; ++i) {
    store.Append("job", "w0", "h", {Line(i, 0, "r0-" + std::to_string(i))}, 0);
  }
  store.Append("job", "w1", "h", {Line(9, 1, "r1")}, 0);
  EXPECT_EQ(Texts(store.Read("job", {})),
            (std::vector<std::string>{"r0-2", "r0-3", "r0-4", "r1"}));

  limits.lines_per_rank = 1000;
  limits.bytes_per_rank = 4 * (LogStore::Cost(Line(0, 0, "")) + 101);
  LogStore bytes(limits);
  for (int i = 0; i < 10; ++i) {
    bytes.Append("job", "w", "", {Line(i, 0, std::string(100, 'x'))}, 0);
  }
  EXPECT_EQ(bytes.Read("job", {}).lines.size(), 4u);
  EXPECT_LE(bytes.bytes(), limits.bytes_per_rank);
}

TEST(LogStoreTest, DroppedLinesAreSaidWhereTheyWereLost) {
  LogStore store({});
  store.Append("job", "w0", "h", {Line(10, 2, "after the outage")}, 17);
  const LogStore::Page page = store.Read("job", {});
  ASSERT_EQ(page.lines.size(), 2u);
  EXPECT_NE(page.lines[0].text().find("17 lines"), std::string::npos)
      << page.lines[0].text();
  EXPECT_EQ(page.lines[0].rank(), 2);
  EXPECT_EQ(page.lines[0].severity(), "WARNING");
  EXPECT_EQ(page.lines[1].text(), "after the outage");
}

TEST(LogStoreTest, AnAnswerKeepsTheNewestLinesThatFitAndCountsTheRest) {
  LogStore store({});
  for (int i = 0; i < 10; ++i) {
    store.Append("job", "w", "", {Line(i, 0, std::string(100, 'a' + i))}, 0);
  }
  LogStore::Query query;
  query.max_bytes = 3 * (LogStore::Cost(Line(0, 0, "")) + 101) + 5;
  const LogStore::Page page = store.Read("job", query);
  ASSERT_EQ(page.lines.size(), 3u);
  EXPECT_EQ(page.lines.back().text()[0], 'j');
  EXPECT_EQ(page.omitted, 7);
}

TEST(LogStoreTest, PastTheTotalTheLogAppendedToLongestAgoGoesFirst) {
  LogStore::Limits limits;
  const int64_t line = LogStore::Cost(Line(0, 0, std::string(1000, 'x'))) +
                       static_cast<int64_t>(std::string("w").size());
  limits.bytes_per_rank = 100 * line;
  limits.total_bytes = 5 * line;
  LogStore store(limits);
  store.Append("old", "w", "", {Line(1, 0, std::string(1000, 'x'))}, 0);
  store.Append("old", "w", "", {Line(2, 0, std::string(1000, 'x'))}, 0);
  store.Append("new", "w", "", {Line(3, 0, std::string(1000, 'x'))}, 0);
  store.Append("new", "w", "", {Line(4, 0, std::string(1000, 'x'))}, 0);
  EXPECT_EQ(store.Read("old", {}).lines.size(), 2u);
  store.Append("new", "w", "", {Line(5, 0, std::string(1000, 'x'))}, 0);
  store.Append("new", "w", "", {Line(6, 0, std::string(1000, 'x'))}, 0);
  EXPECT_TRUE(store.Read("old", {}).lines.empty());
  EXPECT_EQ(store.Read("new", {}).lines.size(), 4u);
  EXPECT_LE(store.bytes(), limits.total_bytes);
  // One job alone over the total loses its oldest lines.
  for (int i = 0; i < 10; ++i) {
    store.Append("new", "w", "", {Line(10 + i, 0, std::string(1000, 'y'))}, 0);
  }
  EXPECT_LE(store.bytes(), limits.total_bytes);
  EXPECT_EQ(store.Read("new", {}).lines.back().time_ms(), 19);
}

TEST(LogStoreTest, AdmissionsAndDeletion) {
  LogStore store({});
  EXPECT_FALSE(store.Admitted("job", "w"));
  store.Admit("job", "w");
  EXPECT_TRUE(store.Admitted("job", "w"));
  EXPECT_FALSE(store.Admitted("job", "v"));
  store.Append("job", "w", "", {Line(1, 0, "x")}, 0);
  EXPECT_GT(store.bytes(), 0);
  store.Delete("job");
  EXPECT_EQ(store.bytes(), 0);
  EXPECT_FALSE(store.Admitted("job", "w"));
  EXPECT_TRUE(store.Read("job", {}).lines.empty());
}

}  // namespace
}  // namespace ringleader
