// The supervisor's internal HTTP endpoint (/livez, /readyz, /metrics), served from the
// supervisor's own loop through a ZeroMQ STREAM socket — so /livez answering proves the loop
// turns. One request per connection (Connection: close); requests larger than 8 KiB are refused.
//
// Thread safety: none; the supervisor's loop owns it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <zmq.hpp>

#include "base/status.h"

namespace tandem::supervisor {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const std::string& path)>;

  HttpServer(zmq::context_t& ctx, Handler handler);
  // "host:port" → tcp://host:port. Unavailable when it cannot bind.
  Status Bind(const std::string& host_port);
  zmq::socket_t& socket() { return socket_; }
  // Handles whatever is readable; never blocks.
  void OnReadable();

 private:
  void Respond(const std::string& peer, const HttpResponse& response);

  zmq::socket_t socket_;
  Handler handler_;
  std::map<std::string, std::string> pending_;  // peer → request bytes so far
};

}  // namespace tandem::supervisor
