// Protocol facts (DESIGN §2–§3) that every side needs the same way: what a command means, not how
// it is encoded. One place, so that the runtime, the supervisor, the tools and the tests agree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/time.h"
#include "ipc/codec.h"

namespace tandem::ipc {

// A protocol frontier as a Frontier: no element is the empty frontier ("closed"; for compaction
// "drop"), else its one time. REQUIRES: at most one element (validation checks it).
inline Frontier FrontierOf(const pb::Frontier& f) {
  return f.elements().empty() ? Frontier::Empty() : Frontier::At(f.elements(0));
}

// AllowCompaction with the empty frontier: drop the index.
inline bool IsDrop(const pb::Command& c) {
  return c.has_allow_compaction() && c.allow_compaction().frontier().elements().empty();
}

// Every collection a dataflow creates: its source imports, builds and index exports, in that
// order.
inline std::vector<std::string> CreatedIds(const pb::DataflowDescription& desc) {
  std::vector<std::string> ids;
  for (const auto& s : desc.source_imports()) ids.push_back(s.id());
  for (const auto& b : desc.objects_to_build()) ids.push_back(b.id());
  for (const auto& e : desc.index_exports()) ids.push_back(e.id());
  return ids;
}

// Peek uuids between the supervisor and the runtimes (DESIGN §3, "Observers"): the supervisor
// puts each session's peek uuids into a namespace of their own, so that answers reach the session
// that asked and the runtimes can tell an observer's read from the controller's. An observer
// session n's uuid u travels as "~o<n>:u"; the controller's as itself, unless it begins with '~'
// ("~c:u" then). No two (session, uuid) pairs share a wire uuid.
using SessionId = std::uint64_t;
inline constexpr SessionId kControllerSession = 0;  // observers are numbered from 1

inline std::string WireUuidPrefix(SessionId session) {
  return session == kControllerSession ? "~c:" : "~o" + std::to_string(session) + ":";
}
// A session's peek uuid as the runtimes see it, and back: UuidAsSent(s, WireUuid(s, u)) == u.
inline std::string WireUuid(SessionId session, std::string_view uuid) {
  if (session == kControllerSession && !uuid.starts_with('~')) return std::string(uuid);
  return WireUuidPrefix(session) + std::string(uuid);
}
inline std::string UuidAsSent(SessionId session, std::string_view wire) {
  const std::string prefix = WireUuidPrefix(session);
  if (wire.starts_with(prefix)) wire.remove_prefix(prefix.size());
  return std::string(wire);
}
// A Peek or CancelPeek of an observer session, as a runtime receives it: it reads, and changes
// nothing a controller's replay could redefine under it.
inline bool IsObserverRead(const pb::Command& c) {
  const std::string* uuid = c.has_peek()               ? &c.peek().uuid()
                            : c.has_cancel_peek()      ? &c.cancel_peek().uuid()
                            : c.has_subscribe()        ? &c.subscribe().uuid()
                            : c.has_cancel_subscribe() ? &c.cancel_subscribe().uuid()
                                                       : nullptr;
  return uuid != nullptr && uuid->starts_with("~o");
}

// Subscribe uuids between the supervisor and the runtimes (DESIGN §10): every Subscribe the
// supervisor forwards gets the wire uuid WireUuid(session, "~s<n>:" + uuid), n unique in the
// supervisor's life — a subscribe answers many times over a long while, and its answers must never
// be taken for those of an earlier subscribe with the same uuid (one the supervisor ended itself:
// too slow, a new epoch). Observers' subscribes stay observer reads (IsObserverRead).
inline std::string SubscribeWireUuid(SessionId session, std::uint64_t n, std::string_view uuid) {
  return WireUuid(session, "~s" + std::to_string(n) + ":" + std::string(uuid));
}
// The session's uuid of a wire uuid made by SubscribeWireUuid(session, …).
inline std::string ClientUuidOfSubscribe(SessionId session, std::string_view wire) {
  std::string inner = UuidAsSent(session, wire);
  std::string_view v = inner;
  if (!v.starts_with("~s")) return inner;
  std::size_t i = 2;
  while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
  if (i == 2 || i >= v.size() || v[i] != ':') return inner;
  return std::string(v.substr(i + 1));
}

// Write uuids between the supervisor and the runtimes (DESIGN §9): the supervisor gives every
// WriteTable it forwards a wire uuid "~w<n>:" + the client's uuid, n unique in the supervisor's
// life, so that each answer reaches the one session that sent that write. The runtime strips the
// prefix: the client's uuid is the write's idempotency key (a retry from another session, or after
// a restart, has the same key).
inline std::string WriteWireUuid(std::uint64_t n, std::string_view uuid) {
  return "~w" + std::to_string(n) + ":" + std::string(uuid);
}
// The client's uuid of a wire uuid made by WriteWireUuid (a uuid without such a prefix: itself).
inline std::string_view ClientUuidOfWrite(std::string_view wire) {
  if (!wire.starts_with("~w")) return wire;
  std::size_t i = 2;
  while (i < wire.size() && wire[i] >= '0' && wire[i] <= '9') ++i;
  if (i == 2 || i >= wire.size() || wire[i] != ':') return wire;
  return wire.substr(i + 1);
}

}  // namespace tandem::ipc
