// The supervisor ↔ runtime channel (DESIGN §1): one ZeroMQ DEALER pair per runtime over ipc://, in
// the supervisor's 0700 runtime directory. Commands go down and responses come up on it, each
// one message (ipc::Encode of a Command or a Response), in order.
//
// Both ends: no high-water mark — a message is never dropped and a send never blocks, because the
// stream's order is the protocol (DESIGN §3.1) — and no linger: when either side goes, shared fate
// takes the replica down and queued messages are worthless.
#pragma once

#include <string>
#include <zmq.hpp>

namespace tandem::ipc {

// "ipc://<runtime_dir>/<name>.sock".
std::string RuntimeChannelEndpoint(const std::string& runtime_dir, const std::string& name);

// The supervisor's end: binds `endpoint`. Throws zmq::error_t.
zmq::socket_t BindRuntimeChannel(zmq::context_t& ctx, const std::string& endpoint);

// A runtime's end: connects to `endpoint` (the supervisor may bind it later). Throws zmq::error_t.
zmq::socket_t ConnectRuntimeChannel(zmq::context_t& ctx, const std::string& endpoint);

}  // namespace tandem::ipc
