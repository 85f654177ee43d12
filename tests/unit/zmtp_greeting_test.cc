// The ZMTP greeting probe (ipc/zmtp_greeting.h) against in-process ZeroMQ servers, and the
// controller client's refused-handshake reasons that rely on it (ipc/client.h): a replica whose
// security mechanism is not the client's is named as such on every attempt, not only when
// libzmq's race lets its greeting out before it closes the connection.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "ipc/client.h"
#include "ipc/curve_keys.h"
#include "ipc/zmtp_greeting.h"

namespace tandem::ipc {
namespace zmtp_greeting_test {

using namespace std::chrono_literals;

// A ROUTER bound on an ephemeral loopback port; with `curve`, a CURVE server. libzmq's I/O thread
// runs the handshakes, so nothing needs to read it.
struct Server {
  zmq::context_t context;
  zmq::socket_t router{context, zmq::socket_type::router};
  CurveKeyPair keys;
  std::string endpoint;

  explicit Server(bool curve, const std::string& bind = "tcp://127.0.0.1:0") {
    router.set(zmq::sockopt::linger, 0);
    if (curve) {
      keys = *GenerateCurveKeyPair();
      router.set(zmq::sockopt::curve_server, 1);
      router.set(zmq::sockopt::curve_secretkey, keys.secret_z85);
    }
    router.bind(bind);
    endpoint = router.get(zmq::sockopt::last_endpoint);
  }
};

TEST(PeerSecurityMechanism, NamesWhatTheServerAnnounces) {
  zmq::context_t context;
  Server plain(false);
  Server curve(true);
  EXPECT_EQ(PeerSecurityMechanism(context, plain.endpoint, 2s), "NULL");
  EXPECT_EQ(PeerSecurityMechanism(context, curve.endpoint, 2s), "CURVE");
}

TEST(PeerSecurityMechanism, NothingListeningOrSilentIsNoAnswer) {
  zmq::context_t context;
  std::string closed;
  {
    Server gone(false);
    closed = gone.endpoint;
  }
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(PeerSecurityMechanism(context, closed, 60s), std::nullopt);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s) << "a refused connection ends it";
  // A TCP listener that never speaks (a STREAM socket accepts and says nothing).
  zmq::socket_t silent(context, zmq::socket_type::stream);
  silent.set(zmq::sockopt::linger, 0);
  silent.bind("tcp://127.0.0.1:0");
  start = std::chrono::steady_clock::now();
  EXPECT_EQ(PeerSecurityMechanism(context, silent.get(zmq::sockopt::last_endpoint), 300ms),
            std::nullopt);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "bounded by its limit";
  EXPECT_EQ(PeerSecurityMechanism(context, "not-an-endpoint", 300ms), std::nullopt);
}

ControllerClient::Options WithTimeout(std::optional<CurveClientKeys> curve) {
  ControllerClient::Options options;
  options.timeout = 3s;
  options.end_on_disconnect = true;
  options.curve = std::move(curve);
  return options;
}

CurveClientKeys SomeClientKeys() {
  const CurveKeyPair server = *GenerateCurveKeyPair();
  const CurveKeyPair client = *GenerateCurveKeyPair();
  return {server.public_z85, client.public_z85, client.secret_z85};
}

// The worst case of libzmq's race, every time: a plain (NULL) server that closes each handshake
// before the rest of its greeting (its mechanism) has left. A raw STREAM socket in a thread: it
// sends the signature and major version at once; a peer that sends more than those 11 bytes is
// handshaking, and is cut off; after that, a peer that sends exactly 11 and waits (the probe) gets
// the rest.
class GreetingWithholdingServer {
 public:
  GreetingWithholdingServer() {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind("tcp://127.0.0.1:0");
    endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
    thread_ = std::thread([this] { Run(); });
  }
  ~GreetingWithholdingServer() {
    stop_ = true;
    thread_.join();
  }
  const std::string& endpoint() const { return endpoint_; }
  int cut_off() const { return cut_off_; }

 private:
  struct Peer {
    std::string received;
    std::chrono::steady_clock::time_point since;
  };
  static constexpr std::size_t kSignatureAndMajor = 11;

  void Send(const std::string& id, const std::string& bytes) {
    socket_.send(zmq::buffer(id), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(bytes), zmq::send_flags::none);  // empty: close the connection
  }

  void Run() {
    std::map<std::string, Peer> peers;
    zmq::pollitem_t item = {socket_.handle(), 0, ZMQ_POLLIN, 0};
    while (!stop_) {
      zmq::poll(&item, 1, 10ms);
      zmq::message_t id;
      zmq::message_t data;
      while (socket_.recv(id, zmq::recv_flags::dontwait)) {
        (void)socket_.recv(data, zmq::recv_flags::none);
        const std::string key = id.to_string();
        if (data.size() == 0) {
          if (peers.erase(key) == 0) {  // connected: our signature and major version, at once
            peers[key].since = std::chrono::steady_clock::now();
            Send(key, std::string("\xFF\0\0\0\0\0\0\0\0\x7F\x03", kSignatureAndMajor));
          }
          continue;
        }
        Peer& peer = peers[key];
        peer.received.append(data.to_string_view());
        peer.since = std::chrono::steady_clock::now();
        if (peer.received.size() > kSignatureAndMajor) {
          Send(key, "");
          peers.erase(key);
          ++cut_off_;
        }
      }
      for (auto it = peers.begin(); it != peers.end();) {
        // Only once a handshake was cut off (the client probes only after one): a slow client's
        // rest of the greeting is not taken for a probe's silence.
        if (cut_off_ > 0 && it->second.received.size() == kSignatureAndMajor &&
            std::chrono::steady_clock::now() - it->second.since > 50ms) {
          std::string rest(64 - kSignatureAndMajor, '\0');
          rest[0] = 1;  // minor version
          rest.replace(1, 4, "NULL");
          Send(it->first, rest);
          it->second.received += '!';  // answered; its close comes as an empty message
        }
        ++it;
      }
    }
  }

  zmq::context_t context_;
  zmq::socket_t socket_{context_, zmq::socket_type::stream};
  std::string endpoint_;
  std::atomic<bool> stop_{false};
  std::atomic<int> cut_off_{0};
  std::thread thread_;
};

TEST(ControllerClientHandshake, MechanismMismatchIsNamedWhenTheGreetingNeverArrives) {
  GreetingWithholdingServer server;
  ControllerClient c(server.endpoint(), WithTimeout(SomeClientKeys()));
  const Status s = c.Hello("curve-vs-withheld");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("it does not use CURVE, and this client does"), std::string::npos)
      << s.ToString();
  EXPECT_GE(server.cut_off(), 1) << "the handshake itself never saw the server's mechanism";
}

// Against libzmq itself, both ways, a few fresh clients each: the race goes either way per
// connection, and both ways end in the same reason.
TEST(ControllerClientHandshake, CurveClientAgainstAPlainReplicaSaysWhy) {
  Server plain(false);
  for (int i = 0; i < 5; ++i) {
    ControllerClient c(plain.endpoint, WithTimeout(SomeClientKeys()));
    const Status s = c.Hello("curve-vs-plain");
    ASSERT_FALSE(s.ok());
    ASSERT_NE(s.message().find("it does not use CURVE, and this client does"), std::string::npos)
        << "attempt " << i << ": " << s.ToString();
  }
}

TEST(ControllerClientHandshake, PlainClientAgainstACurveReplicaSaysWhy) {
  Server curve(true);
  for (int i = 0; i < 5; ++i) {
    ControllerClient c(curve.endpoint, WithTimeout(std::nullopt));
    const Status s = c.Hello("plain-vs-curve");
    ASSERT_FALSE(s.ok());
    ASSERT_NE(s.message().find("it requires CURVE authentication"), std::string::npos)
        << "attempt " << i << ": " << s.ToString();
  }
}

}  // namespace zmtp_greeting_test
}  // namespace tandem::ipc
