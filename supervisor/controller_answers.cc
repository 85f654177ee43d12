// An answer's way out through the controller endpoint: the supervisor's loop hands Answer what a
// runtime link received and the multiplexer's verdict on it. Peek and write answers go to the
// session that asked, subscribe answers to their session (TOO_SLOW when its pipe refuses a
// batch), Frontiers to every session (and into the FrontiersCache), everything else to the
// controller; what goes nowhere is counted in tandem_responses_dropped_total.
#include <spdlog/spdlog.h>

#include "base/check.h"
#include "supervisor/controller_endpoint.h"
#include "supervisor/metric_names.h"

namespace tandem::supervisor {

using namespace metric;  // NOLINT(google-build-using-namespace): the metric names read as words

void ControllerEndpoint::Answer(const Multiplexer::Verdict& verdict,
                                const ipc::pb::Response& response, std::string_view bytes) {
  if (verdict.peek_latency) {
    metrics_.Observe(kPeekLatency, {},
                     std::chrono::duration<double>(*verdict.peek_latency).count());
  }
  if (response.has_write_response()) {
    // Made (or not) whether or not its session still listens.
    metrics_.Inc(kWrites, {{"result", response.write_response().has_time() ? "ok" : "error"}});
    if (verdict.write_latency) {
      metrics_.Observe(kWriteSeconds, {},
                       std::chrono::duration<double>(*verdict.write_latency).count());
    }
  }
  if (!verdict.forward) {
    metrics_.Inc(kDropped, {{"reason", verdict.drop_reason}});
    return;
  }
  if (!verdict.subscribe.empty()) {
    DeliverSubscribeAnswer(verdict, response);
    return;
  }
  if (response.has_frontiers()) {
    if (auto latency = one_shots_.OnFrontiers(response.frontiers(), Clock::now())) {
      metrics_.Observe(kOneShotLatency, {}, std::chrono::duration<double>(*latency).count());
    }
    OnFrontiers(response, bytes);
    return;
  }
  if (verdict.to != kControllerSession) {
    const std::string* observer = sessions_.ObserverPeer(verdict.to);
    // ForgetSession ends a session in both places at once.
    TANDEM_CHECK(observer != nullptr,
                 "the multiplexer tracks peeks and writes of live sessions only");
    SendToPeer(*observer, response);
    return;
  }
  if (!sessions_.controller()) {
    metrics_.Inc(kDropped, {{"reason", "no_controller"}});
    return;
  }
  if (response.has_peek_response() && !verdict.rewritten) {
    // The controller's uuid is the wire uuid: forwarded as the runtime encoded it.
    SendEncodedToPeer(*sessions_.controller(), bytes, "PeekResponse");
    return;
  }
  SendToPeer(*sessions_.controller(), response);
}

void ControllerEndpoint::OnFrontiers(const ipc::pb::Response& response, std::string_view bytes) {
  const std::string& id = response.frontiers().id();
  frontiers_.Record(response.frontiers(),
                    validator_.collections().count(id) > 0 ||
                        (last_complete_ && last_complete_->collections().count(id) > 0));
  if (!sessions_.controller() && sessions_.observers().empty()) {
    metrics_.Inc(kDropped, {{"reason", "no_controller"}});
    return;
  }
  if (sessions_.controller()) SendEncodedToPeer(*sessions_.controller(), bytes, "Frontiers");
  for (const auto& [peer, observer] : sessions_.observers()) {
    SendEncodedToPeer(peer, bytes, "Frontiers");
  }
}

const std::string* ControllerEndpoint::PeerOfSession(SessionId session) const {
  if (session == kControllerSession) {
    return sessions_.controller() ? &*sessions_.controller() : nullptr;
  }
  return sessions_.ObserverPeer(session);
}

void ControllerEndpoint::DeliverSubscribeAnswer(const Multiplexer::Verdict& verdict,
                                                const ipc::pb::Response& response) {
  const std::string* peer = PeerOfSession(verdict.to);
  if (response.has_subscribe_end()) {
    if (!peer || !SendToPeer(*peer, response, false)) mux_.DeferEnd(verdict.to, response);
    metrics_.Set(kSubscribes, {}, static_cast<double>(mux_.live_subscribes()));
    return;
  }
  const ipc::pb::SubscribeBatch& batch = response.subscribe_batch();
  if (peer && SendToPeer(*peer, response, false)) {
    mux_.Delivered(verdict.subscribe, batch.upper(),
                   static_cast<std::size_t>(batch.updates_size()));
    metrics_.Inc(kSubscribeBatches);
    metrics_.Inc(kSubscribeRows, {}, batch.updates_size());
    return;
  }
  // Its pipe is full (controller_send_hwm messages wait): the subscriber does not read.
  metrics_.Inc(kDropped, {{"reason", "subscriber_too_slow"}});
  spdlog::info("a subscribe of session {} ended too slow: its pipe refused a batch", verdict.to);
  mux_.TooSlow(verdict.subscribe, Clock::now());
  metrics_.Set(kSubscribes, {}, static_cast<double>(mux_.live_subscribes()));
}

void ControllerEndpoint::FlushSubscribeEnds() {
  if (mux_.pending_ends() == 0) return;
  mux_.FlushEnds([this](SessionId session, const ipc::pb::Response& end) {
    const std::string* peer = PeerOfSession(session);
    // No peer: the controller's wait for its next Hello (an ended observer's were dropped).
    return peer != nullptr && SendToPeer(*peer, end, false);
  });
}

}  // namespace tandem::supervisor
