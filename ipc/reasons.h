// How the checks at the boundary write a reason (plan_typing, source_schema, table_write,
// validate): the pieces every refusal is made of. Included by those .cc files only — not part of
// tandem_ipc's interface.
//
// A reason says what is wrong and, where it helps, what to send instead; Within() puts where it
// arose in front, so a reason reads outermost first. Ids from outside are printed with
// Printable(), never as they came.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "base/status.h"
#include "ipc/codec.h"

namespace tandem::ipc {

// base/time.h reserves UINT64_MAX for the empty frontier; it is never a time.
inline constexpr std::uint64_t kNotATime = std::numeric_limits<std::uint64_t>::max();

inline Status Invalid(std::string why) { return Status::InvalidArgument(std::move(why)); }

// The reason, with where it arose in front: "build u5: Mfp: column 7 out of range ...".
inline Status Within(const std::string& context, const Status& status) {
  return Status(status.code(), context + ": " + status.message());
}

// An id from the controller, safe to print; the empty id shows as "".
inline std::string Quoted(const std::string& id) { return id.empty() ? "\"\"" : Printable(id, 40); }

// "[0, 2]": column positions for a reason text.
template <typename Values>  // a RepeatedField<uint32_t> or a vector<uint32_t>
std::string ListText(const Values& values) {
  std::string out = "[";
  for (const std::uint32_t value : values) {
    out += (out.size() > 1 ? ", " : "") + std::to_string(value);
  }
  return out + "]";
}

inline std::string TimeText(std::uint64_t time) { return std::to_string(time); }

// Refuses the time that is not one (`what` names it: "as_of", "until", ...).
inline Status CheckTime(std::uint64_t time, const std::string& what) {
  if (time == kNotATime) {
    return Invalid(what + " " + TimeText(time) + " is not a valid time (UINT64_MAX is reserved)");
  }
  return Status::Ok();
}

}  // namespace tandem::ipc
