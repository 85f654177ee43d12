// base/utf8.h: the frontend's one UTF-8 validator against RFC 3629 — every two-byte prefix with
// the edges of the later continuation bytes, decoded here by the RFC's arithmetic rather than by
// byte ranges — and PostgreSQL's wording of an invalid sequence.
#include "base/utf8.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace tandem::utf8_test {
namespace {

// The RFC's definition, by code point: the sequence's length from its lead byte's bits, each
// continuation 10xxxxxx, the code point within the length's range (not overlong), not a
// surrogate, at most U+10FFFF, not NUL. 0 when invalid.
std::size_t ReferenceLength(const std::string& s) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  std::size_t length;
  std::uint32_t cp;
  if (b(0) < 0x80) {
    return b(0) == 0 ? 0 : 1;
  } else if ((b(0) & 0xe0) == 0xc0) {
    length = 2, cp = b(0) & 0x1f;
  } else if ((b(0) & 0xf0) == 0xe0) {
    length = 3, cp = b(0) & 0x0f;
  } else if ((b(0) & 0xf8) == 0xf0) {
    length = 4, cp = b(0) & 0x07;
  } else {
    return 0;
  }
  if (s.size() < length) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3f);
  }
  const std::uint32_t least = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
  if (cp < least || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
  return length;
}

TEST(Utf8, EverySequenceIsJudgedAsRfc3629Defines) {
  // Past the second byte every continuation has the one range 0x80..0xbf: its edges and a byte
  // on each side stand for all.
  const unsigned char tails[] = {0x41, 0x7f, 0x80, 0xbf, 0xc0};
  std::size_t valid = 0;
  for (int b0 = 0; b0 < 256; ++b0) {
    for (int b1 = 0; b1 < 256; ++b1) {
      for (const unsigned char b2 : tails) {
        for (const unsigned char b3 : tails) {
          const std::string s = {static_cast<char>(b0), static_cast<char>(b1),
                                 static_cast<char>(b2), static_cast<char>(b3)};
          const std::size_t expected = ReferenceLength(s);
          ASSERT_EQ(Utf8SequenceLength(s, 0), expected)
              << std::hex << b0 << " " << b1 << " " << int{b2} << " " << int{b3};
          // Cut short by the end of the text, a sequence is invalid.
          for (std::size_t cut = 1; cut < 4; ++cut) {
            const std::size_t length = Utf8SequenceLength(std::string_view(s).substr(0, cut), 0);
            ASSERT_EQ(length, expected <= cut ? expected : 0) << std::hex << b0 << " " << b1;
          }
          valid += expected != 0;
        }
      }
    }
  }
  EXPECT_GT(valid, 0u);
}

TEST(Utf8, FindInvalidUtf8NamesTheFirstBadOffset) {
  EXPECT_EQ(FindInvalidUtf8(""), std::nullopt);
  EXPECT_EQ(FindInvalidUtf8("plain ascii"), std::nullopt);
  EXPECT_EQ(FindInvalidUtf8("h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::nullopt);
  EXPECT_EQ(FindInvalidUtf8("\xc0\x80"), 0u);                    // overlong NUL
  EXPECT_EQ(FindInvalidUtf8("ab\xe0\x80\xaf"), 2u);              // overlong '/'
  EXPECT_EQ(FindInvalidUtf8("\xed\xa0\x80"), 0u);                // a surrogate
  EXPECT_EQ(FindInvalidUtf8("\xf4\x90\x80\x80"), 0u);            // past U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("x\xe2\x82"), 1u);                   // cut short
  EXPECT_EQ(FindInvalidUtf8("\x80"), 0u);                        // a lone continuation
  EXPECT_EQ(FindInvalidUtf8(std::string("a\0b", 3)), 1u);        // NUL
  EXPECT_EQ(FindInvalidUtf8("\xf4\x8f\xbf\xbf"), std::nullopt);  // U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("\xc3\xa9\xc3"), 2u);                // valid, then cut short
}

TEST(Utf8, TheMessageShowsTheBytesTheLeadByteAnnouncesAsPostgresDoes) {
  // PostgreSQL 15: SELECT convert_from('\xc328'::bytea, 'UTF8') →
  //   invalid byte sequence for encoding "UTF8": 0xc3 0x28
  EXPECT_EQ(InvalidUtf8Message("\xc3\x28'", 0),
            "invalid byte sequence for encoding \"UTF8\": 0xc3 0x28");
  EXPECT_EQ(InvalidUtf8Message("ab\xe0\x80\xaf!", 2),
            "invalid byte sequence for encoding \"UTF8\": 0xe0 0x80 0xaf");
  EXPECT_EQ(InvalidUtf8Message("\xf4\x90\x80\x80\x80", 0),
            "invalid byte sequence for encoding \"UTF8\": 0xf4 0x90 0x80 0x80");
  EXPECT_EQ(InvalidUtf8Message("x\xe2\x82", 1),  // no further than the end
            "invalid byte sequence for encoding \"UTF8\": 0xe2 0x82");
  EXPECT_EQ(InvalidUtf8Message("\x80\x80", 0), "invalid byte sequence for encoding \"UTF8\": 0x80");
  EXPECT_EQ(InvalidUtf8Message(std::string("\0", 1), 0),
            "invalid byte sequence for encoding \"UTF8\": 0x00");
  EXPECT_EQ(InvalidUtf8Message("\xff\xbf", 0), "invalid byte sequence for encoding \"UTF8\": 0xff");
}

}  // namespace
}  // namespace tandem::utf8_test
