// The security mechanism a ZeroMQ endpoint announces in its ZMTP 3 greeting (RFC 23: "NULL",
// "PLAIN" or "CURVE"), read without completing a handshake.
//
// Why: when two peers' mechanisms differ, each closes the connection as soon as it reads the
// other's greeting, and libzmq may close before its own greeting has left — so the side that
// connected often sees only a closed connection (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) and
// retries forever. This probe sends only the part of a greeting that makes the peer send all of
// its own (the 10-byte signature and the major version; RFC 23 §"Version Negotiation"), reads the
// peer's mechanism field, and closes. The peer sees a connection that ended during its handshake.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <zmq.hpp>

namespace tandem::ipc {

// The mechanism name `endpoint` (tcp:// or ipc://) announces, or nullopt when it did not answer
// with a ZMTP 3 greeting within `limit` (not listening, not ZeroMQ, an older ZMTP). Never throws.
std::optional<std::string> PeerSecurityMechanism(zmq::context_t& context,
                                                 const std::string& endpoint,
                                                 std::chrono::milliseconds limit);

}  // namespace tandem::ipc
