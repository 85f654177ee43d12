// tandem-shm read: an index read in place the way a program on this host reads it — through
// tandem::LocalReader (client/local_reader.h), so an operator sees exactly what the library gives:
// a peek's answer (rows with counts, or the index's error) at a time or at the latest readable one,
// for one key, a key prefix, a key range, or every key.
#include <algorithm>
#include <tuple>

#include "client/local_reader.h"
#include "tools/shm/support.h"

namespace tandem::tools {

using namespace inspect;

namespace {

// "d1,d2,…" in the datum syntax as a key row.
Result<Row> ParseKey(const std::string& flag, const std::string& text) {
  auto parts = SplitDatumList(text);
  if (!parts.ok())
    return Status::InvalidArgument(flag + " " + text + ": " + parts.status().message());
  Row key;
  for (const std::string& part : *parts) {
    auto d = ParseDatumText(part);
    if (!d.ok()) return Status::InvalidArgument(flag + " " + text + ": " + d.status().message());
    key.push_back(std::move(d).value());
  }
  return key;
}

}  // namespace

int RunRead(const Output& o, const ReadOptions& options) {
  const std::optional<GlobalId> id = GlobalId::Parse(options.id);
  if (!id) return Usage(o, "invalid index id '" + options.id + "': expected e.g. u1, s3 or t7");
  if (options.key && (options.prefix || options.from || options.to)) {
    return Usage(o, "--key reads one key: it does not go with --prefix, --from or --to");
  }
  KeyRange range;
  std::optional<Row> key;
  for (auto [flag, text, into] : {std::tuple{"--key", &options.key, &key},
                                  std::tuple{"--prefix", &options.prefix, &range.prefix},
                                  std::tuple{"--from", &options.from, &range.lower},
                                  std::tuple{"--to", &options.to, &range.upper}}) {
    if (!*text) continue;
    auto parsed = ParseKey(flag, **text);
    if (!parsed.ok()) return Usage(o, parsed.status().message());
    *into = std::move(parsed).value();
  }
  const std::string name = ResolveSegmentName(options.segment);
  auto reader = LocalReader::Attach(name);
  if (!reader.ok()) return Fail(o, reader.status());
  auto answer =
      key ? (*reader)->Lookup(*id, *key, options.at) : (*reader)->Scan(*id, range, options.at);
  if (!answer.ok()) return Fail(o, answer.status(), id->ToString() + ": ");
  std::sort(answer->rows.begin(), answer->rows.end(),
            [](const auto& a, const auto& b) { return CompareRow(a.first, b.first) < 0; });
  const bool truncated = options.limit && answer->rows.size() > *options.limit;
  if (truncated) answer->rows.resize(*options.limit);
  if (o.json) {
    JsonWriter json;
    json.BeginObject().Key("name").String(name);
    json.Key("id").String(id->ToString());
    json.Key("time").UInt(answer->time);
    json.Key("generation").UInt((*reader)->generation());
    json.Key("rows").BeginArray();
    for (const auto& [row, count] : answer->rows) {
      json.BeginObject().Key("row");
      json.RowValue(row);
      json.Key("count").Int(count).EndObject();
    }
    json.EndArray();
    json.Key("truncated").Bool(truncated);
    json.EndObject();
    Emit(o, json);
    return kExitOk;
  }
  o.out << id->ToString() << " in " << name << " at time " << answer->time << " (read in place)\n";
  if (!answer->rows.empty()) {
    Table table({"ROW", "COUNT"}, {false, true});
    for (const auto& [row, count] : answer->rows) table.Add({RowText(row), std::to_string(count)});
    o.out << table.Render();
  }
  o.out << answer->rows.size() << " row" << (answer->rows.size() == 1 ? "" : "s");
  if (truncated) o.out << " (truncated by --limit " << *options.limit << ")";
  o.out << "\n";
  return kExitOk;
}

}  // namespace tandem::tools
