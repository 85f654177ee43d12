#include "ipc/channel.h"

namespace tandem::ipc {
namespace {

zmq::socket_t ChannelSocket(zmq::context_t& ctx) {
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::sndhwm, 0);
  s.set(zmq::sockopt::rcvhwm, 0);
  return s;
}

}  // namespace

std::string RuntimeChannelEndpoint(const std::string& runtime_dir, const std::string& name) {
  return "ipc://" + runtime_dir + "/" + name + ".sock";
}

zmq::socket_t BindRuntimeChannel(zmq::context_t& ctx, const std::string& endpoint) {
  zmq::socket_t s = ChannelSocket(ctx);
  s.bind(endpoint);
  return s;
}

zmq::socket_t ConnectRuntimeChannel(zmq::context_t& ctx, const std::string& endpoint) {
  zmq::socket_t s = ChannelSocket(ctx);
  s.connect(endpoint);
  return s;
}

std::string SequenceFrame(std::uint64_t seq) {
  std::string out(kSequenceBytes, '\0');
  for (std::size_t i = 0; i < kSequenceBytes; ++i) out[i] = static_cast<char>(seq >> (8 * i));
  return out;
}

std::optional<std::uint64_t> ParseSequence(std::string_view bytes) {
  if (bytes.size() < kSequenceBytes) return std::nullopt;
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < kSequenceBytes; ++i) {
    seq |= std::uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  }
  return seq;
}

}  // namespace tandem::ipc
