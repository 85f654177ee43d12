#include "frontend/sql/parameters.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "frontend/sqlstate.h"

namespace tandem::sql {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// Calls visit on every pg_query::Node under `roots`, each once, descending into those it
// returns true for.
void ForEachNode(const std::vector<Message*>& roots,
                 const std::function<bool(pg_query::Node&)>& visit) {
  std::vector<Message*> todo(roots.begin(), roots.end());
  std::vector<const FieldDescriptor*> fields;
  while (!todo.empty()) {
    Message* m = todo.back();
    todo.pop_back();
    if (m->GetDescriptor() == pg_query::Node::descriptor() &&
        !visit(*static_cast<pg_query::Node*>(m))) {
      continue;
    }
    const auto* reflection = m->GetReflection();
    fields.clear();
    reflection->ListFields(*m, &fields);
    for (const FieldDescriptor* f : fields) {
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
      if (f->is_repeated()) {
        const int n = reflection->FieldSize(*m, f);
        for (int i = 0; i < n; ++i) todo.push_back(reflection->MutableRepeatedMessage(m, f, i));
      } else {
        todo.push_back(reflection->MutableMessage(m, f));
      }
    }
  }
}

// Calls visit on every ParamRef node under `roots` (each once).
void ForEachParamRef(const std::vector<Message*>& roots,
                     const std::function<void(pg_query::Node&)>& visit) {
  ForEachNode(roots, [&](pg_query::Node& node) {
    if (node.node_case() != pg_query::Node::kParamRef) return true;
    visit(node);
    return false;
  });
}

std::vector<Message*> Roots(ParsedStatement& statement) {
  std::vector<Message*> roots;
  std::visit(
      [&](auto& form) {
        using T = std::decay_t<decltype(form)>;
        if constexpr (std::is_same_v<T, PostgresStatement>) {
          roots.push_back(&form.stmt);
        } else if constexpr (std::is_same_v<T, SubscribeStatement>) {
          roots.push_back(&form.target);
          if (form.as_of) roots.push_back(&*form.as_of);
        } else if constexpr (std::is_same_v<T, SelectAsOfStatement>) {
          roots.push_back(&form.select);
          roots.push_back(&form.as_of);
        } else if constexpr (std::is_same_v<T, ExplainAsOfStatement>) {
          roots.push_back(&form.explain);
          roots.push_back(&form.as_of);
        } else if constexpr (std::is_same_v<T, ShowColumnsStatement>) {
          roots.push_back(&form.relation);
        }
      },
      statement.form);
  return roots;
}

pg_query::Node Cast(pg_query::Node value, std::string_view type_name, int location) {
  if (type_name.empty()) return value;
  pg_query::Node out;
  auto* cast = out.mutable_type_cast();
  *cast->mutable_arg() = std::move(value);
  auto* type = cast->mutable_type_name();
  type->add_names()->mutable_string()->set_sval("pg_catalog");
  type->add_names()->mutable_string()->set_sval(std::string(type_name));
  type->set_typemod(-1);
  type->set_location(location);
  cast->set_location(location);
  return out;
}

}  // namespace

SqlResult<int> CountParameters(const ParsedStatement& statement, std::string_view sql) {
  // The walk needs mutable messages; a copy keeps the statement as it is.
  ParsedStatement copy = statement;
  int highest = 0;
  std::optional<SqlError> error;
  ForEachParamRef(Roots(copy), [&](pg_query::Node& node) {
    const auto& ref = node.param_ref();
    if (error) return;
    const int position =
        ref.location() >= 0 ? CursorPosition(sql, static_cast<std::size_t>(ref.location())) : 0;
    if (ref.number() <= 0) {
      error = SqlError(sqlstate::kUndefinedParameter,
                       "there is no parameter $" + std::to_string(ref.number()), position);
    } else if (ref.number() > kMaxParameters) {
      error = SqlError(
          sqlstate::kProgramLimitExceeded,
          "a statement takes at most " + std::to_string(kMaxParameters) + " parameters", position);
    } else if (ref.number() > highest) {
      highest = ref.number();
    }
  });
  if (error) return *error;
  return highest;
}

std::map<int, std::string> CastParameterTypes(const ParsedStatement& statement) {
  ParsedStatement copy = statement;  // the walk takes mutable messages
  std::map<int, std::string> out;
  ForEachNode(Roots(copy), [&](pg_query::Node& node) {
    if (node.has_type_cast() && node.type_cast().arg().has_param_ref()) {
      const auto& names = node.type_cast().type_name().names();
      if (!names.empty() && names.rbegin()->has_string() &&
          node.type_cast().type_name().array_bounds_size() == 0) {
        out.emplace(node.type_cast().arg().param_ref().number(), names.rbegin()->string().sval());
      }
    }
    return true;
  });
  return out;
}

void ReplaceParameters(ParsedStatement& statement,
                       const std::function<pg_query::Node(int number, int location)>& replace) {
  ForEachParamRef(Roots(statement), [&](pg_query::Node& node) {
    const int number = node.param_ref().number();
    const int location = node.param_ref().location();
    node = replace(number, location);
  });
}

pg_query::Node NullConstant(std::string_view type_name, int location) {
  pg_query::Node value;
  value.mutable_a_const()->set_isnull(true);
  value.mutable_a_const()->set_location(location);
  return Cast(std::move(value), type_name, location);
}

pg_query::Node StringConstant(std::string text, std::string_view type_name, int location) {
  pg_query::Node value;
  value.mutable_a_const()->mutable_sval()->set_sval(std::move(text));
  value.mutable_a_const()->set_location(location);
  return Cast(std::move(value), type_name, location);
}

bool IsParameterConstant(const pg_query::Node& node) {
  if (!node.has_type_cast() || !node.type_cast().arg().has_a_const()) return false;
  const auto& cast = node.type_cast();
  const int location = cast.location();
  return location >= 0 && cast.arg().a_const().location() == location &&
         cast.type_name().location() == location;
}

}  // namespace tandem::sql
