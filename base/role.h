// The roles of a runtime process (DESIGN §1): one enum for the supervisor (which spawns and
// routes to them), the runtimes (which render or serve by role) and the tools. A solo runtime
// does what both others do, alone.
#pragma once

#include <optional>
#include <string_view>

namespace tandem {

enum class Role { kMaintenance = 0, kInteractive = 1, kSolo = 2 };

// "maintenance", "interactive", "solo": flags (--role), logs, metrics labels.
constexpr const char* RoleName(Role role) {
  switch (role) {
    case Role::kMaintenance:
      return "maintenance";
    case Role::kInteractive:
      return "interactive";
    case Role::kSolo:
      return "solo";
  }
  return "?";
}

// "maint", "inter", "solo": thread names (at most 15 bytes with the ordinal) and log components.
constexpr const char* RoleShortName(Role role) {
  switch (role) {
    case Role::kMaintenance:
      return "maint";
    case Role::kInteractive:
      return "inter";
    case Role::kSolo:
      return "solo";
  }
  return "?";
}

inline std::optional<Role> ParseRole(std::string_view name) {
  for (Role r : {Role::kMaintenance, Role::kInteractive, Role::kSolo}) {
    if (name == RoleName(r)) return r;
  }
  return std::nullopt;
}

// Whether a runtime of this role renders Maintained dataflows and publishes their indexes
// (maintenance, solo), and whether it serves peeks from the registry (interactive, solo).
constexpr bool Renders(Role role) { return role != Role::kInteractive; }
constexpr bool ServesPeeks(Role role) { return role != Role::kMaintenance; }

}  // namespace tandem
