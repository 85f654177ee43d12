#include "ipc/zmtp_greeting.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "ipc/client.h"  // Left

namespace tandem::ipc {
namespace {

// RFC 23 (ZMTP 3.0) greeting: signature (0xFF, 8 bytes of padding, 0x7F), major, minor, a 20-byte
// NUL-padded mechanism name, as-server, 31 bytes of filler.
constexpr std::size_t kSignatureSize = 10;
constexpr std::size_t kMechanismOffset = 12;
constexpr std::size_t kMechanismSize = 20;
constexpr std::size_t kGreetingSize = 64;
constexpr std::array<unsigned char, kSignatureSize + 1> kSignatureAndMajor = {
    0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0x7F, 3};

// The next message part of `probe` within the deadline; false at the deadline or once `gone`
// (the probe's monitor: the connection failed or closed) has something to say.
bool ReceivePart(zmq::socket_t& probe, zmq::socket_t& gone, zmq::message_t& part,
                 std::chrono::steady_clock::time_point deadline) {
  zmq::pollitem_t items[2] = {{probe.handle(), 0, ZMQ_POLLIN, 0},
                              {gone.handle(), 0, ZMQ_POLLIN, 0}};
  for (;;) {
    if (probe.recv(part, zmq::recv_flags::dontwait)) return true;
    const auto left = std::max(Left(deadline), std::chrono::milliseconds(0));
    if (left.count() == 0 || zmq::poll(items, 2, left) <= 0) return false;
    if (items[1].revents & ZMQ_POLLIN) return false;
  }
}

}  // namespace

std::optional<std::string> PeerSecurityMechanism(zmq::context_t& context,
                                                 const std::string& endpoint,
                                                 std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  try {
    // A STREAM socket is a raw connection: each message is [peer routing id][bytes]; connecting
    // delivers [id][empty] once the connection is up.
    zmq::socket_t probe(context, zmq::socket_type::stream);
    probe.set(zmq::sockopt::linger, 0);
    // A refused connection is no answer at once, not at the deadline (a replica that closed our
    // handshake may be one that exited).
    // inproc names are per context, and unbound only once the monitor socket is reaped: one name
    // per probe, never reused.
    static std::atomic<std::uint64_t> probes{0};
    const std::string monitor = "inproc://tandem-greeting-probe-" + std::to_string(++probes);
    if (zmq_socket_monitor(probe.handle(), monitor.c_str(),
                           ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_CLOSED) != 0) {
      return std::nullopt;
    }
    zmq::socket_t gone(context, zmq::socket_type::pair);
    gone.set(zmq::sockopt::linger, 0);
    gone.connect(monitor);
    struct StopMonitor {
      zmq::socket_t& probe;
      ~StopMonitor() { zmq_socket_monitor(probe.handle(), nullptr, 0); }
    } stop_monitor{probe};
    probe.connect(endpoint);
    zmq::message_t id;
    zmq::message_t data;
    if (!ReceivePart(probe, gone, id, deadline) || !id.more() ||
        !ReceivePart(probe, gone, data, deadline) || data.size() != 0) {
      return std::nullopt;
    }
    probe.send(zmq::buffer(id.data(), id.size()), zmq::send_flags::sndmore);
    probe.send(zmq::buffer(kSignatureAndMajor), zmq::send_flags::none);

    std::string greeting;
    while (greeting.size() < kGreetingSize) {
      zmq::message_t from;
      if (!ReceivePart(probe, gone, from, deadline) || !from.more() ||
          !ReceivePart(probe, gone, data, deadline)) {
        return std::nullopt;
      }
      if (data.size() == 0) return std::nullopt;  // the peer closed the connection
      greeting.append(static_cast<const char*>(data.data()), data.size());
    }
    if (static_cast<unsigned char>(greeting[0]) != 0xFF ||
        static_cast<unsigned char>(greeting[kSignatureSize - 1]) != 0x7F ||
        greeting[kSignatureSize] < 3) {
      return std::nullopt;
    }
    const std::string_view field(greeting.data() + kMechanismOffset, kMechanismSize);
    const std::string_view name = field.substr(0, field.find('\0'));
    // RFC 23: uppercase letters, digits and '-', '_', '.', '+', NUL-padded. Anything else is not a
    // greeting to quote back.
    if (name.empty() || name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.+") !=
                            std::string_view::npos) {
      return std::nullopt;
    }
    return std::string(name);
  } catch (const zmq::error_t&) {
    return std::nullopt;
  }
}

}  // namespace tandem::ipc
