// The PostgreSQL listener: a TCP socket on HOST:PORT and one I/O thread that drives every client
// connection (connection.h) with epoll over non-blocking sockets.
//
// Threads. Start() spawns the I/O thread; everything of a connection — its Connection, its
// QueryHandler's Query/Cancel/destruction, the CancelRegistry — lives on it. A handler's sink may
// be written from any thread: its wake queues the connection's id and signals an eventfd, and the
// I/O thread then pumps the connection. Stop() (or the destructor) ends every session with FATAL
// 57P01 and joins the thread; the factory must outlive it.
//
// Fairness: a connection gets a bounded share of each turn of the I/O thread — at most 256 KiB
// read and 256 KiB sent — so one client streaming as fast as it reads cannot starve the others,
// the listener or the sinks' wakes.
//
// Bounds, each a ServerOptions field, none able to stall another connection:
//   * max_connections: a connection beyond it still has its SSLRequest declined and its
//     CancelRequest honoured, then its StartupMessage is answered FATAL 53300 "too many
//     connections" and it is closed, as PostgreSQL does; beyond max_connections +
//     kMaxRefusedAtOnce it is sent that FATAL at once and closed.
//   * startup_timeout: a connection that has not completed its startup by then is closed
//     (FATAL 57014, PostgreSQL's authentication_timeout).
//   * per connection, the message size, the answer buffered for a slow client and the output's
//     high water of ConnectionOptions: a client that does not read its answers costs at most
//     output_high_water + max_buffered_bytes. A handler that waits for room (query_handler.h)
//     streams an answer of any size at the pace its client reads; one that does not cuts the
//     client once it runs max_buffered_bytes ahead (FATAL 53200).
//   * send_stall_timeout: a client that has output waiting and has read none of it for this long
//     is cut (FATAL 08006; its answer ends, unwanted): a client that reads slowly is served
//     however long its answer takes, one that stopped reading does not hold a session forever.
//   * close_timeout: a closed connection's last output (its FATAL) is sent for at most this long,
//     and then its socket, shut for sending, waits at most that long for the client to close too
//     (its input read and dropped meanwhile: closing on unread input would send RST, and a RST
//     discards what the client has not received yet).
//   * file descriptors: when accept fails for want of one (EMFILE, ENFILE), one waiting client is
//     answered FATAL 53300 through a descriptor held in reserve for it, and the listener is
//     disarmed until the next sweep (a quarter second) rather than reported readable at once:
//     the I/O thread goes on serving the open connections instead of spinning on the backlog.
// Idle sessions are kept however long they are idle.
//
// Authentication is `trust` (any user name), so the listener must be on a loopback address
// unless `trust_non_loopback` says otherwise; TLS and SCRAM come later (DESIGN §17).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "base/thread_annotations.h"
#include "frontend/pgwire/connection.h"
#include "frontend/pgwire/query_handler.h"

namespace tandem::pgwire {

inline constexpr std::size_t kMaxRefusedAtOnce = 32;

struct ServerOptions {
  // "host:port" (host a name, an IPv4 address or [IPv6]); port 0 is the kernel's choice.
  std::string listen_address = "127.0.0.1:6875";
  std::size_t max_connections = 100;
  std::chrono::milliseconds startup_timeout = std::chrono::seconds(60);
  std::chrono::milliseconds close_timeout = std::chrono::seconds(5);
  // Output waiting and none of it sent for this long: the client is cut.
  std::chrono::milliseconds send_stall_timeout = std::chrono::seconds(60);
  // Listen on a non-loopback address although anyone reaching it is trusted.
  bool trust_non_loopback = false;
  ConnectionOptions connection;
};

class Server {
 public:
  // What happened to connections, for metrics and tests.
  struct Counts {
    Counts() {}
    std::uint64_t accepted = 0;
    std::uint64_t refused = 0;    // beyond max_connections
    std::uint64_t timed_out = 0;  // startup_timeout, close_timeout, send_stall_timeout
    std::uint64_t open = 0;       // now
  };

  Server(QueryHandlerFactory& factory, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds, listens and starts the I/O thread. InvalidArgument for an address that is not
  // host:port or not loopback (see above); Unavailable when it cannot bind.
  Status Start();
  // After Start: the port bound (the kernel's, when asked for 0).
  std::uint16_t port() const { return port_; }
  // After Start, before the destructor: "host:port" as bound ("[v6]:port").
  std::string BoundAddress() const;
  // Ends every session (FATAL 57P01) and joins the I/O thread; new connections wait in the
  // listener's backlog until the destructor closes it. Idempotent.
  void Stop();

  Counts counts() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Client;

  void Run();
  void Accept();
  // accept() failed with `error` for want of a descriptor or memory: refuse one waiting client
  // through the reserve descriptor, and disarm the listener until the next Sweep re-arms it.
  void AcceptStarved(int error);
  void OnEvent(std::uint64_t id, std::uint32_t events);
  void OnWake();
  // Reads what the client sent, as long as the connection wants it.
  void Read(Client& c);
  // Sends output, pumps the connection, sends again while it moves — at most a turn's share
  // (kSendPerTurn), the rest on the next turn; drops the client when it is done or broken; sets
  // its epoll interest. False when it was dropped.
  bool Service(Client& c);
  // A lingering client's input, read and dropped (a turn's share); drops it once the client has
  // closed or is gone. False when it was dropped.
  bool DrainLingering(Client& c);
  void Drop(std::uint64_t id);
  void Sweep(Clock::time_point now);
  void Wake(std::uint64_t id);

  QueryHandlerFactory& factory_;
  const ServerOptions options_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: sinks' wakes and Stop
  // A descriptor held (on /dev/null) so that a client can still be accepted and told why it is
  // refused when the process has none left; -1 while it is lent out or could not be reopened.
  int reserve_fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};

  // I/O thread only.
  bool listener_disarmed_ = false;  // AcceptStarved: until the next Sweep
  CancelRegistry cancels_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Client>> clients_;
  std::uint64_t next_id_ = 2;  // 0: the listener, 1: the eventfd

  Mutex wake_mu_;
  std::vector<std::uint64_t> woken_ TANDEM_GUARDED_BY(wake_mu_);

  std::atomic<std::uint64_t> accepted_{0}, refused_{0}, timed_out_{0}, open_{0};
};

}  // namespace tandem::pgwire
