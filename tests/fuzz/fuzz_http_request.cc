// Fuzz target: the bytes an internal HTTP client can send (supervisor/http_request.h), as the
// server sees them — the whole input, and every prefix a slow client could have sent first.
// Properties (a violation abort()s, which libFuzzer and the corpus runner report):
//   * a request has an uppercase method of 1-16 letters and a path that starts with '/', of
//     visible ASCII, without '?' or '#', within the target limit;
//   * an error has one of the documented statuses and a reason;
//   * an incomplete head is within the size limit and has no end yet;
//   * the outcome is a function of the head: bytes after a complete head change nothing, and a
//     prefix that ended incomplete is never followed by a different head;
//   * parsing never reads past max_bytes (a smaller limit bounds it the same way).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "supervisor/http_request.h"

namespace tandem::supervisor {
namespace {

bool Same(const HttpParse& a, const HttpParse& b) {
  return a.outcome == b.outcome && a.status == b.status && a.reason == b.reason &&
         a.request.method == b.request.method && a.request.path == b.request.path;
}

void Check(std::string_view bytes, std::size_t max_bytes, const HttpParse& p) {
  switch (p.outcome) {
    case HttpParse::Outcome::kRequest: {
      const std::string& m = p.request.method;
      FUZZ_CHECK(!m.empty() && m.size() <= 16, m);
      for (char c : m) FUZZ_CHECK(c >= 'A' && c <= 'Z', m);
      const std::string& path = p.request.path;
      FUZZ_CHECK(!path.empty() && path.front() == '/', path);
      FUZZ_CHECK(path.size() <= kMaxHttpTargetBytes, path);
      for (char c : path) FUZZ_CHECK(c > 0x20 && c < 0x7f && c != '?' && c != '#', path);
      FUZZ_CHECK(bytes.substr(0, max_bytes).find("\r\n\r\n") != std::string_view::npos, path);
      break;
    }
    case HttpParse::Outcome::kError:
      FUZZ_CHECK(p.status == 400 || p.status == 413 || p.status == 414 || p.status == 431 ||
                     p.status == 505,
                 std::to_string(p.status));
      FUZZ_CHECK(!p.reason.empty(), std::to_string(p.status));
      break;
    case HttpParse::Outcome::kIncomplete:
      FUZZ_CHECK(bytes.size() < max_bytes, std::to_string(bytes.size()));
      FUZZ_CHECK(bytes.find("\r\n\r\n") == std::string_view::npos, "an end was not seen");
      break;
  }
}

}  // namespace
}  // namespace tandem::supervisor

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tandem::supervisor;  // NOLINT(google-build-using-namespace)
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (const std::size_t max_bytes : {kMaxHttpRequestBytes, std::size_t{64}}) {
    const HttpParse whole = ParseHttpRequest(bytes, max_bytes);
    Check(bytes, max_bytes, whole);
    // Bytes past the limit are never looked at.
    if (bytes.size() > max_bytes) {
      const std::string cut(bytes.substr(0, max_bytes));
      FUZZ_CHECK(Same(ParseHttpRequest(cut, max_bytes), whole),
                 "the bytes past max_bytes changed the outcome");
    }
    // What a client could have sent first, in the server's receive order: once a prefix is a
    // request or an error, more bytes do not change it; an incomplete prefix does not decide.
    for (std::size_t cut = 0; cut < bytes.size(); cut += 1 + bytes.size() / 16) {
      const HttpParse first = ParseHttpRequest(bytes.substr(0, cut), max_bytes);
      Check(bytes.substr(0, cut), max_bytes, first);
      if (first.outcome != HttpParse::Outcome::kIncomplete) {
        FUZZ_CHECK(Same(first, whole), "a complete prefix was decided differently later");
      }
    }
  }
  return 0;
}
