#include "common/quote_for_error.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

TEST(QuoteForErrorTest, ShortValuesAreEscapedWhole) {
  EXPECT_EQ(QuoteForError(""), "\"\"");
  EXPECT_EQ(QuoteForError("a b"), "\"a b\"");
  EXPECT_EQ(QuoteForError("a\nb\"c"), "\"a\\nb\\\"c\"");
  EXPECT_EQ(QuoteForError(std::string("a\0b", 3)), "\"a\\x00\\x62\"");
}

TEST(QuoteForErrorTest, LongValuesShowTheirFirst80BytesAndTheirSize) {
  EXPECT_EQ(QuoteForError(std::string(81, 'x')),
            absl::StrCat("\"", std::string(80, 'x'), "...\" (81 bytes)"));
  EXPECT_EQ(QuoteForError(std::string(80, 'x')),
            absl::StrCat("\"", std::string(80, 'x'), "\""));
}

TEST(QuoteForErrorTest, AMegabyteIsCutToTheLimit) {
  const std::string q = QuoteForError(std::string(1 << 20, 'j'));
  EXPECT_LE(q.size(), kMaxQuotedChars);
  EXPECT_TRUE(absl::EndsWith(q, "...\" (1048576 bytes)")) << q;
}

TEST(QuoteForErrorTest, EscapingCannotMakeItLongerThanTheLimit) {
  // Each byte escapes to four characters: 80 would make 320.
  const std::string q = QuoteForError(std::string(1000, '\x01'));
  EXPECT_LE(q.size(), kMaxQuotedChars);
  EXPECT_TRUE(absl::EndsWith(q, "\\x01...\" (1000 bytes)")) << q;
  // Whole escapes only, and no raw control byte.
  const size_t escapes = q.size() - std::string("\"...\" (1000 bytes)").size();
  EXPECT_EQ(escapes % 4, 0u) << q;
  EXPECT_EQ(q.find('\x01'), std::string::npos);
}

TEST(QuoteForErrorTest, TheLimitHoldsForTheLargestSize) {
  // Every size's suffix fits: 20 digits is the most a size_t prints.
  const std::string q =
      QuoteForError(absl::string_view(std::string(200, '\xff')));
  EXPECT_LE(q.size() - 3 + 20, kMaxQuotedChars) << q;
}

}  // namespace
}  // namespace ringleader
