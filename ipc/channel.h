// The supervisor ↔ runtime channel (DESIGN §1): one ZeroMQ DEALER pair per runtime over ipc://, in
// the supervisor's 0700 runtime directory. Commands go down and responses come up on it, in order:
// a response is one message (ipc::Encode of a Response); a command is one message of two frames,
// its sequence number (SequenceFrame) and then ipc::Encode of the Command. With the peek fast path
// PeekResponses may come up the answer ring instead, so they may overtake (or fall behind) the
// runtime's other responses; nothing depends on that order — a peek's answer is matched by its
// uuid, and frontiers, write answers and statuses stay on the channel, in order.
//
// Sequence numbers (DESIGN §14): the supervisor numbers the commands it sends each runtime 1, 2,
// 3, … over every path — this channel and the peek request ring (shm/peek_ring.h, whose records
// are the same two parts concatenated) — and the runtime applies command n only after every
// command below n (workers/command_sequencer.h). So a peek that took the ring never overtakes
// the CreateDataflow or AllowCompaction sent before it on the channel.
//
// Both ends: no high-water mark — a message is never dropped and a send never blocks, because the
// stream's order is the protocol (DESIGN §3.1) — and no linger: when either side goes, shared fate
// takes the replica down and queued messages are worthless.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <zmq.hpp>

namespace tandem::ipc {

// "ipc://<runtime_dir>/<name>.sock".
std::string RuntimeChannelEndpoint(const std::string& runtime_dir, const std::string& name);

// The supervisor's end: binds `endpoint`. Throws zmq::error_t.
zmq::socket_t BindRuntimeChannel(zmq::context_t& ctx, const std::string& endpoint);

// A runtime's end: connects to `endpoint` (the supervisor may bind it later). Throws zmq::error_t.
zmq::socket_t ConnectRuntimeChannel(zmq::context_t& ctx, const std::string& endpoint);

// A command's sequence number as sent: 8 bytes, little-endian.
inline constexpr std::size_t kSequenceBytes = 8;
std::string SequenceFrame(std::uint64_t seq);
// The number in the first kSequenceBytes of `bytes`; nullopt when there are fewer.
std::optional<std::uint64_t> ParseSequence(std::string_view bytes);

}  // namespace tandem::ipc
