// The controller client (ipc/client.h) with heartbeats (Options::end_on_disconnect, as tandem-ctl
// uses it) whose application stops receiving while the replica sends, and whose connection is
// then cut: the session ends lost(), with every response that arrived before the cut still to be
// received — and libzmq never aborts the process.
//
// With ZeroMQ's default receive high-water mark (1000 messages) it did abort, in libzmq 4.3.4's
// assertion `!_io_error` (stream_engine_base.cpp:331, zeromq/libzmq#4364): the full receive pipe
// stopped the engine reading the connection; the server's close then came back as an error on it
// (the RST answering the client's next PING, about a second in), which in_event turns into
// _io_error without tearing the engine down while its input is stopped; and the next heartbeat
// (timer_event → out_event) failed the assertion, about two seconds in — before the heartbeat
// timeout (three seconds after the first PING left unanswered) would have ended the connection
// cleanly. So the scenario runs in a death test's child: an abort kills the child only, and the
// test fails with its signal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "ipc/client.h"
#include "ipc/codec.h"

namespace tandem::ipc {
namespace controller_client_cut_test {

using namespace std::chrono_literals;

// Responses the server sends while the client is not reading: several times the default receive
// high-water mark.
constexpr int kResponses = 5000;

// The scenario, in the death test's child. Its exit code: 0 when the session ended lost() after
// every response was received; 1 when not; 2 to 4 when the server or the Hello failed.
int CutWhileNotReceiving() {
  // The server: a ROUTER that queues everything for the client (no send high-water mark). Closing
  // it waits up to its linger for that queue to be written to the connection — a bounded wait,
  // over within milliseconds here (some 65 KB) — so that every response has left before the
  // connection is cut, rather than relying on the sleep below being long enough.
  zmq::context_t server_context(1);
  zmq::socket_t server(server_context, zmq::socket_type::router);
  server.set(zmq::sockopt::sndhwm, 0);
  server.set(zmq::sockopt::linger, 1000);
  server.bind("tcp://127.0.0.1:0");
  const std::string endpoint = server.get(zmq::sockopt::last_endpoint);

  int received = 0;
  bool lost = false;
  {
    // A controller session's options (controller/session.cc).
    ControllerClient::Options options;
    options.timeout = 5s;
    options.linger = 200ms;
    options.end_on_disconnect = true;
    options.goodbye = true;
    ControllerClient client(endpoint, options);

    // The handshake, in this one thread: the Hello goes out, the server answers it, and taking
    // the HelloAccepted makes the session connected().
    client.StartHello("cut", /*observer=*/true);
    zmq::pollitem_t item{server.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(5000)) <= 0) return 2;
    zmq::message_t peer, body;
    (void)server.recv(peer);
    (void)server.recv(body);
    const auto hello = DecodeCommand(body.to_string_view());
    if (!hello.ok() || !hello.message.has_hello()) return 3;
    auto send = [&](const pb::Response& r) {
      (void)server.send(zmq::buffer(peer.to_string_view()), zmq::send_flags::sndmore);
      (void)server.send(zmq::buffer(Encode(r)), zmq::send_flags::none);
    };
    pb::Response accepted;
    accepted.mutable_status()->mutable_hello_accepted()->set_nonce(hello.message.hello().nonce());
    accepted.mutable_status()->mutable_hello_accepted()->set_observer(true);
    send(accepted);
    if (!client.Receive(5s) || !client.connected()) return 4;

    for (int i = 0; i < kResponses; ++i) {
      pb::Response batch;
      batch.mutable_subscribe_batch()->set_uuid("s");
      batch.mutable_subscribe_batch()->set_lower(static_cast<std::uint64_t>(i));
      batch.mutable_subscribe_batch()->set_upper(static_cast<std::uint64_t>(i) + 1);
      send(batch);
    }
    // The scenario's sleeps: the client does not receive for 200 ms while the responses arrive;
    // then the server goes away, its connection with it.
    std::this_thread::sleep_for(200ms);
    server.close();
    server_context.close();
    // Still not receiving, for longer than the heartbeat timeout (3 s): every heartbeat timer of
    // the client's engine fires meanwhile (where the abort was).
    std::this_thread::sleep_for(3500ms);

    // Then everything that arrived is received, and the session is lost.
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!client.lost() && Left(deadline).count() > 0) {
      if (client.Receive(100ms)) ++received;
    }
    while (client.Receive(0ms)) ++received;  // taken after the loss: what had arrived before it
    lost = client.lost();
  }  // ~ControllerClient: no Goodbye and no linger (the session is lost)
  return lost && received == kResponses ? 0 : 1;
}

TEST(ControllerClientCut, ACutConnectionWhileTheClientIsNotReceivingEndsLostAndNeverAborts) {
  // The child runs this test again from the start (the client and its libzmq threads are made
  // there), rather than a fork of a process whose other threads are gone.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(_exit(CutWhileNotReceiving()), ::testing::ExitedWithCode(0), "");
}

}  // namespace controller_client_cut_test
}  // namespace tandem::ipc
