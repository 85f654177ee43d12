// The supervisor's internal HTTP endpoint (/livez, /readyz, /metrics), served from the
// supervisor's own loop — so /livez answering proves the loop turns — on a plain non-blocking
// TCP socket whose descriptors the loop polls beside its ZeroMQ sockets. One request per
// connection (Connection: close), parsed by http_request.h.
//
// Bounded (DESIGN §12), and every byte a connection costs is here: at most `max_connections`
// connections at once (a new connection beyond it closes the oldest one, so that clients holding
// connections open cannot keep a health probe out), a request head of at most
// kMaxHttpRequestBytes (else 413), and `request_timeout` for the whole exchange — sending the
// request, reading the answer — after which the connection is closed (Tick()).
//
// Thread safety: none; the supervisor's loop owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>
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
  using Clock = std::chrono::steady_clock;
  using Handler = std::function<HttpResponse(const std::string& path)>;
  struct Limits {
    std::size_t max_connections = 64;
    Clock::duration request_timeout = std::chrono::seconds(5);
  };
  // What happened to connections, for /metrics.
  struct Counts {
    std::uint64_t accepted = 0;
    std::uint64_t evicted = 0;    // closed for a newer one, beyond max_connections
    std::uint64_t timed_out = 0;  // not done within request_timeout
    std::uint64_t bad = 0;        // answered with a 4xx/5xx by the parser, or not GET/HEAD
    std::uint64_t answered = 0;
  };

  HttpServer(Handler handler, Limits limits);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // "host:port" (host a name, an IPv4 address, [IPv6] or *). Unavailable when it cannot bind.
  Status Bind(const std::string& host_port);
  // After Bind: the address actually bound, "host:port" ("[v6]:port"), the kernel's port for 0.
  std::string BoundAddress() const;

  // The descriptors to poll this turn: the listening socket first, then one per connection.
  void AppendPollItems(std::vector<zmq::pollitem_t>* items) const;
  // After the poll: `items` are the ones AppendPollItems added, with their revents. Never blocks.
  void OnPoll(const zmq::pollitem_t* items, std::size_t count);
  // Closes the connections past the timeout. Call every turn.
  void Tick(Clock::time_point now);

  std::size_t open_connections() const { return connections_.size(); }
  const Counts& counts() const { return counts_; }

 private:
  struct Connection {
    Clock::time_point since;
    std::string in;         // the request so far, at most kMaxHttpRequestBytes
    std::string out;        // the answer still to send
    bool answered = false;  // `out` is the answer; once sent, the connection drains and closes
  };
  void Accept();
  // Reads what `fd` sent; answers once the request is complete. False when it is closed.
  bool OnReadable(int fd, Connection& c);
  // Sends what is left of the answer. False when the connection is done or broken.
  bool OnWritable(int fd, Connection& c);
  void Answer(Connection& c, const HttpResponse& response);
  void Close(int fd);

  Handler handler_;
  Limits limits_;
  Counts counts_;
  int listen_fd_ = -1;
  std::map<int, Connection> connections_;  // by descriptor
};

}  // namespace tandem::supervisor
