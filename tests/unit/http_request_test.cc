// The internal HTTP endpoint's request parser (supervisor/http_request.h): what it accepts, what
// it refuses with which status, and that it waits for a head that is still coming. Fuzzed by
// tests/fuzz/fuzz_http_request.cc.
#include "supervisor/http_request.h"

#include <gtest/gtest.h>

#include <string>

namespace tandem::supervisor {
namespace {

using Outcome = HttpParse::Outcome;

TEST(HttpRequest, AcceptsAGetAndDropsTheQueryAndFragment) {
  const HttpParse p =
      ParseHttpRequest("GET /metrics?x=1#f HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\nbody");
  ASSERT_EQ(p.outcome, Outcome::kRequest) << p.reason;
  EXPECT_EQ(p.request.method, "GET");
  EXPECT_EQ(p.request.path, "/metrics");
  EXPECT_EQ(ParseHttpRequest("HEAD / HTTP/1.0\r\n\r\n").request.path, "/");
}

TEST(HttpRequest, WaitsForTheRestOfAHead) {
  for (const char* partial : {"", "G", "GET /livez HTTP/1.1", "GET /livez HTTP/1.1\r\nHost: a\r\n",
                              "GET /livez HTTP/1.1\r\n\r"}) {
    EXPECT_EQ(ParseHttpRequest(partial).outcome, Outcome::kIncomplete) << partial;
  }
}

TEST(HttpRequest, RefusesWhatIsMalformedOrTooLargeWithItsStatus) {
  const std::pair<std::string, int> cases[] = {
      {"GET livez HTTP/1.1\r\n\r\n", 400},
      {"get /livez HTTP/1.1\r\n\r\n", 400},
      {"GET /livez\r\n\r\n", 400},
      {"GET /li vez HTTP/1.1\r\n\r\n", 400},
      {"GET /livez HTTP/2.0\r\n\r\n", 505},
      {"GET /livez HTTP/1.1\r\nno colon\r\n\r\n", 400},
      {"GET /livez HTTP/1.1\r\n folded: x\r\n\r\n", 400},
      {"GET /livez HTTP/1.1\r\nX: a\x01"
       "b\r\n\r\n",
       400},
      {"GET /" + std::string(kMaxHttpTargetBytes, 'a') + " HTTP/1.1\r\n\r\n", 414},
      {"GET / HTTP/1.1\r\nX-Big: " + std::string(kMaxHttpRequestBytes, 'a') + "\r\n\r\n", 413},
      {std::string(kMaxHttpRequestBytes, 'G'), 413},
  };
  for (const auto& [bytes, status] : cases) {
    const HttpParse p = ParseHttpRequest(bytes);
    EXPECT_EQ(p.outcome, Outcome::kError) << bytes.substr(0, 60);
    EXPECT_EQ(p.status, status) << bytes.substr(0, 60);
    EXPECT_FALSE(p.reason.empty());
  }
  std::string many = "GET / HTTP/1.1\r\n";
  for (std::size_t i = 0; i <= kMaxHttpHeaders; ++i) many += "X: y\r\n";
  EXPECT_EQ(ParseHttpRequest(many + "\r\n").status, 431);
}

}  // namespace
}  // namespace tandem::supervisor
