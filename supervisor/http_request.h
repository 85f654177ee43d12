// The internal HTTP endpoint's request parser (DESIGN §12: every decoder of outside bytes is
// bounded and fuzzed): a pure function of the bytes a client sent so far, so that it can be
// fuzzed alone (tests/fuzz/fuzz_http_request.cc).
//
// What it accepts: a request line `METHOD SP target SP HTTP/1.x CRLF` (METHOD 1-16 uppercase
// letters, target an origin-form path of visible ASCII from '/', at most kMaxHttpTargetBytes),
// then at most kMaxHttpHeaders header lines `name: value` (name a token, value without control
// characters), then an empty line; the whole head within `max_bytes`. A body is never read (the
// endpoint serves GET and HEAD only); anything after the head is ignored.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tandem::supervisor {

inline constexpr std::size_t kMaxHttpRequestBytes = 8192;
inline constexpr std::size_t kMaxHttpTargetBytes = 2048;
inline constexpr std::size_t kMaxHttpHeaders = 64;

struct HttpRequest {
  std::string method;  // "GET"
  std::string path;    // the target without its query or fragment: "/metrics"
};

struct HttpParse {
  enum class Outcome {
    kIncomplete,  // a well-formed beginning: wait for more bytes
    kRequest,     // `request` is set
    kError,       // `status` (400, 413, 414, 431, 505) and `reason` are set: answer and close
  };
  Outcome outcome = Outcome::kIncomplete;
  HttpRequest request;
  int status = 0;
  std::string reason;
};

// Parses the bytes received so far on one connection.
HttpParse ParseHttpRequest(std::string_view bytes, std::size_t max_bytes = kMaxHttpRequestBytes);

}  // namespace tandem::supervisor
