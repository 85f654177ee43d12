#include "supervisor/http_request.h"

namespace tandem::supervisor {

namespace {

HttpParse Error(int status, std::string reason) {
  HttpParse p;
  p.outcome = HttpParse::Outcome::kError;
  p.status = status;
  p.reason = std::move(reason);
  return p;
}

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool IsVisible(char c) { return c > 0x20 && c < 0x7f; }

// One header line (without its CRLF).
bool ValidHeader(std::string_view line) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  for (std::size_t i = 0; i < colon; ++i) {
    if (!IsTokenChar(line[i])) return false;  // also refuses obsolete line folding (a space)
  }
  for (std::size_t i = colon + 1; i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  }
  return true;
}

// The request line (without its CRLF); sets `out` or returns the error.
HttpParse ParseRequestLine(std::string_view line) {
  const auto sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) return Error(400, "malformed request line");
  const auto sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return Error(400, "malformed request line");
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (method.empty() || method.size() > 16) return Error(400, "malformed method");
  for (char c : method) {
    if (c < 'A' || c > 'Z') return Error(400, "malformed method");
  }
  if (target.empty() || target.front() != '/') return Error(400, "the target must be a path");
  if (target.size() > kMaxHttpTargetBytes) return Error(414, "target too long");
  for (char c : target) {
    if (!IsVisible(c)) return Error(400, "malformed target");
  }
  if (version.size() != 8 || version.substr(0, 7) != "HTTP/1.") {
    return Error(version.substr(0, 5) == "HTTP/" ? 505 : 400, "unsupported HTTP version");
  }
  if (version[7] != '0' && version[7] != '1') return Error(505, "unsupported HTTP version");
  HttpParse p;
  p.outcome = HttpParse::Outcome::kRequest;
  p.request.method = std::string(method);
  p.request.path = std::string(target.substr(0, target.find_first_of("?#")));
  return p;
}

}  // namespace

HttpParse ParseHttpRequest(std::string_view bytes, std::size_t max_bytes) {
  const std::string_view head = bytes.substr(0, max_bytes);
  const auto end = head.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (bytes.size() >= max_bytes) return Error(413, "request head larger than the limit");
    return {};
  }
  const std::string_view line = head.substr(0, head.find("\r\n"));
  HttpParse p = ParseRequestLine(line);
  if (p.outcome != HttpParse::Outcome::kRequest) return p;
  std::size_t at = line.size() + 2;
  std::size_t headers = 0;
  while (at < end + 2) {
    const auto eol = head.find("\r\n", at);
    const std::string_view header = head.substr(at, eol - at);
    if (++headers > kMaxHttpHeaders) return Error(431, "too many header fields");
    if (!ValidHeader(header)) return Error(400, "malformed header field");
    at = eol + 2;
  }
  return p;
}

}  // namespace tandem::supervisor
