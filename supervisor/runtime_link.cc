#include "supervisor/runtime_link.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "base/check.h"
#include "ipc/channel.h"
#include "supervisor/metric_names.h"

namespace tandem::supervisor {

using namespace metric;  // NOLINT(google-build-using-namespace): the metric names read as words

RuntimeMessage::RuntimeMessage(zmq::message_t message) : message_(std::move(message)) { Decode(); }

RuntimeMessage::RuntimeMessage(std::string_view record, shm::RingReader& ring)
    : record_(record), ring_(&ring) {
  Decode();
}

RuntimeMessage::RuntimeMessage(RuntimeMessage&& other) noexcept
    : response_(std::move(other.response_)),
      message_(std::move(other.message_)),
      record_(other.record_),
      ring_(std::exchange(other.ring_, nullptr)),
      forward_(other.forward_) {}

RuntimeMessage::~RuntimeMessage() {
  // Done with the record (forwarded as it is, or copied): its room goes back to the runtime.
  if (ring_ != nullptr) ring_->Pop();
}

void RuntimeMessage::Decode() {
  auto decoded = ipc::DecodeResponse(bytes());
  // Runtimes are ours: an undecodable message is our bug, not bad input.
  TANDEM_CHECK(decoded.ok(), "a runtime sent an undecodable response");
  response_ = std::move(decoded.message);
}

RuntimeLink::RuntimeLink(Role role, Metrics& metrics, QuietSockets& quiet)
    : role_(role), metrics_(metrics), quiet_(quiet) {}

RuntimeLink::~RuntimeLink() = default;

Status RuntimeLink::Bind(zmq::context_t& ctx, const std::string& runtime_dir) {
  endpoint_ = ipc::RuntimeChannelEndpoint(runtime_dir, RoleName(role_));
  try {
    channel_ = std::make_unique<zmq::socket_t>(ipc::BindRuntimeChannel(ctx, endpoint_));
  } catch (const zmq::error_t& e) {
    return Status::Unavailable("could not bind runtime channel " + endpoint_ + ": " + e.what());
  }
  return Status::Ok();
}

const PeekPath& RuntimeLink::EnablePeekPath(const shm::Segment& segment) {
  peek_path_ = std::make_unique<PeekPath>(segment);
  return *peek_path_;
}

void RuntimeLink::Close() {
  channel_.reset();
  peek_path_.reset();
}

void RuntimeLink::Send(const std::string& encoded, bool peek) {
  Deliver(next_seq_++, encoded, peek);
}

void RuntimeLink::Deliver(std::uint64_t seq, const std::string& encoded, bool peek) {
  if (!unsent_.empty()) {  // the runtime is not ready: keep the order
    unsent_.push_back({seq, encoded, peek});
    return;
  }
  // A ring that is full now (or a record larger than it takes) sends the command on the channel:
  // back-pressure onto the slower path, never a drop; its number keeps the order.
  if (peek && peek_ring_ && peek_path_->TrySend(seq, encoded)) return;
  // HWM 0 on runtime channels: never drops while the runtime is connected; it reads in order.
  // A send finds no peer before the runtime has connected (then the command waits in `unsent_`,
  // in order, until it is ready) and once its end of the channel is closed — its process is gone
  // and its SIGCHLD is on the way (shared fate takes the replica down). A blocking send would
  // then never return, so the supervisor would never get to that SIGCHLD.
  TANDEM_CHECK(channel_ != nullptr, "a command for a runtime after its link was closed");
  quiet_.Stir(channel_->handle());
  const std::string number = ipc::SequenceFrame(seq);
  if (!channel_->send(zmq::buffer(number), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
    if (!ready_) {
      unsent_.push_back({seq, encoded, peek});
      return;
    }
    spdlog::warn(
        "the {} runtime's channel has no peer (the runtime is gone?): a command was not "
        "delivered",
        RoleName(role_));
    return;
  }
  // ZeroMQ takes a message's later frames once it took the first (and the high-water mark is 0).
  TANDEM_CHECK(channel_->send(zmq::buffer(encoded), zmq::send_flags::dontwait).has_value(),
               "a runtime channel took a command's number but not the command");
}

void RuntimeLink::SendUnsent() {
  std::vector<Unsent> unsent = std::move(unsent_);
  unsent_.clear();
  for (const Unsent& u : unsent) Deliver(u.seq, u.encoded, u.peek);
}

std::optional<RuntimeMessage> RuntimeLink::Receive() {
  zmq::message_t msg;
  if (!channel_->recv(msg, zmq::recv_flags::dontwait)) {
    quiet_.Quiet(channel_->handle());  // read until nothing: its ZMQ_FD signals what comes
    return std::nullopt;
  }
  std::optional<RuntimeMessage> message(std::in_place, std::move(msg));
  OnStatus(*message);
  return message;
}

std::optional<RuntimeMessage> RuntimeLink::ReceiveAnswer() {
  if (!peek_path_) return std::nullopt;
  shm::RingReader& answers = peek_path_->answers();
  std::string_view bytes;
  if (!answers.Front(&bytes)) return std::nullopt;
  std::optional<RuntimeMessage> message(std::in_place, bytes, answers);
  OnStatus(*message);
  return message;
}

void RuntimeLink::OnStatus(RuntimeMessage& message) {
  const ipc::pb::Response& response = message.response_;
  if (!response.has_status()) return;
  if (response.status().has_runtime_ready()) {
    message.forward_ = false;
    ready_ = true;
    // Only a runtime that says it reads the rings gets peeks through them (one spawned without
    // the fds — the fake runtime of the tests — does not say so).
    peek_ring_ = peek_path_ != nullptr && response.status().runtime_ready().peek_ring();
    SendUnsent();
    metrics_.Set(kRuntimeStalled, {{"role", RoleName(role_)}}, 0);  // watched from now on
    spdlog::info("the {} runtime (pid {}) is ready with {} workers{}", RoleName(role_),
                 response.status().runtime_ready().pid(),
                 response.status().runtime_ready().workers(),
                 peek_ring_ ? "; peeks take the peek rings" : "");
    return;
  }
  if (response.status().has_reconciled()) {
    const auto& rec = response.status().reconciled();
    const std::string role = RoleName(role_);
    metrics_.Inc(kReconciled, {{"role", role}, {"outcome", "kept"}}, rec.kept());
    metrics_.Inc(kReconciled, {{"role", role}, {"outcome", "dropped"}}, rec.dropped());
    metrics_.Inc(kReconciled, {{"role", role}, {"outcome", "built"}}, rec.built());
    spdlog::info("the {} runtime reconciled: kept {}, dropped {}, built {}", role, rec.kept(),
                 rec.dropped(), rec.built());
    // Forwarded once, from the runtime that renders dataflows.
    if (role_ == Role::kInteractive) message.forward_ = false;
  }
}

std::optional<double> RuntimeLink::WatchProgress(std::uint64_t progress, Clock::time_point now,
                                                 const Guards& guards) {
  if (progress != progress_ || progress_at_ == Clock::time_point{}) {
    progress_ = progress;
    progress_at_ = now;
    if (stalled_) {
      stalled_ = false;
      metrics_.Set(kRuntimeStalled, {{"role", RoleName(role_)}}, 0);
      spdlog::info("the {} runtime (pid {}) makes progress again; ready", RoleName(role_), pid_);
    }
    return std::nullopt;
  }
  const double idle = std::chrono::duration<double>(now - progress_at_).count();
  if (idle >= guards.runtime_stall_kill_s) return idle;
  if (idle >= guards.runtime_stall_timeout_s && !stalled_) {
    stalled_ = true;
    metrics_.Set(kRuntimeStalled, {{"role", RoleName(role_)}}, 1);
    metrics_.Inc(kRuntimeStalls, {{"role", RoleName(role_)}});
    spdlog::warn(
        "the {} runtime (pid {}) has made no progress for {} s (stopped or wedged); not ready. "
        "It is taken down after {} s (--runtime-stall-kill)",
        RoleName(role_), pid_, SecondsText(idle), SecondsText(guards.runtime_stall_kill_s));
  }
  return std::nullopt;
}

}  // namespace tandem::supervisor
