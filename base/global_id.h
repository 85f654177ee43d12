// GlobalId: u<n> user, s<n> system, t<n> transient collections (DESIGN §2).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tandem {

class GlobalId {
 public:
  enum class Kind : std::uint8_t { kUser = 'u', kSystem = 's', kTransient = 't' };
  static constexpr std::uint64_t kMaxNumber = (std::uint64_t{1} << 56) - 1;

  constexpr GlobalId() = default;
  constexpr GlobalId(Kind kind, std::uint64_t number) : kind_(kind), number_(number) {}
  static constexpr GlobalId User(std::uint64_t n) { return {Kind::kUser, n}; }
  static constexpr GlobalId System(std::uint64_t n) { return {Kind::kSystem, n}; }
  static constexpr GlobalId Transient(std::uint64_t n) { return {Kind::kTransient, n}; }

  // Parses "u12", "s3", "t7"; nullopt for anything else (including numbers above kMaxNumber).
  static std::optional<GlobalId> Parse(std::string_view text);

  // One uint64 for shared memory: kind in the top byte, number in the low 56 bits. Zero is
  // never a valid packed id (kind is never 0), so it can mean "no id".
  constexpr std::uint64_t Pack() const {
    return (std::uint64_t{static_cast<std::uint8_t>(kind_)} << 56) | number_;
  }
  static std::optional<GlobalId> Unpack(std::uint64_t packed);

  constexpr Kind kind() const { return kind_; }
  constexpr std::uint64_t number() const { return number_; }
  std::string ToString() const;

  constexpr auto operator<=>(const GlobalId&) const = default;

 private:
  Kind kind_ = Kind::kUser;
  std::uint64_t number_ = 0;
};

}  // namespace tandem
