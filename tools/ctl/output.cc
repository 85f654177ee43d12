#include "tools/ctl/output.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "ipc/rows.h"
#include "tools/ctl/schema.h"
#include "tools/ctl/session.h"

namespace tandem::ctl {

using tools::JsonWriter;

namespace {

void FrontierValue(JsonWriter& json, const pb::Frontier& f) {
  if (f.elements().empty()) {
    json.Null();
  } else {
    json.UInt(f.elements(0));
  }
}

std::string RowsText(const pb::Rows& rows) {
  std::string out;
  for (const auto& rc : rows.rows()) {
    out += (out.empty() ? "" : ", ") + RowText(ipc::FromProto(rc.row())) + " x" +
           std::to_string(rc.count());
  }
  return out;
}

}  // namespace

std::string ColumnName(const pb::Schema& schema, int i) {
  if (i < schema.columns_size() && !schema.columns(i).name().empty()) {
    return schema.columns(i).name();
  }
  return "c" + std::to_string(i);
}

std::string FrontierText(const pb::Frontier& f) {
  return f.elements().empty() ? "closed" : std::to_string(f.elements(0));
}

// The frontier object, the same in `frontiers` and `watch`:
// {"id", "write", "input", "output" (times, null when empty), "closed"}.
void FrontiersJson(JsonWriter& json, const pb::Frontiers& f) {
  json.BeginObject().Key("id").String(f.id());
  json.Key("write");
  FrontierValue(json, f.write());
  json.Key("input");
  FrontierValue(json, f.input());
  json.Key("output");
  FrontierValue(json, f.output());
  json.Key("closed").Bool(f.write().elements().empty());
  json.EndObject();
}

// {"row": [datums], "count": n} per row.
void RowsJson(JsonWriter& json, const pb::Rows& rows) {
  json.BeginArray();
  for (const auto& rc : rows.rows()) {
    json.BeginObject().Key("row").RowValue(ipc::FromProto(rc.row()));
    json.Key("count").UInt(rc.count()).EndObject();
  }
  json.EndArray();
}

// One response as `watch` and `run` print it with --json: {"frontiers": F},
// {"peek_response": {"uuid", "rows" | "error" | "canceled": true}}, {"command_error": {"what",
// "why"}} or {"status": the protocol JSON of the Status}.
std::string ResponseJson(const pb::Response& r) {
  JsonWriter json;
  json.BeginObject();
  if (r.has_frontiers()) {
    json.Key("frontiers");
    FrontiersJson(json, r.frontiers());
  } else if (r.has_peek_response()) {
    const auto& p = r.peek_response();
    json.Key("peek_response").BeginObject().Key("uuid").String(p.uuid());
    if (p.has_error()) {
      json.Key("error").String(p.error());
    } else if (p.has_canceled()) {
      json.Key("canceled").Bool(true);
    } else {
      json.Key("rows");
      RowsJson(json, p.rows());
    }
    json.EndObject();
  } else if (r.has_command_error()) {
    json.Key("command_error").BeginObject().Key("what").String(r.command_error().what());
    json.Key("why").String(r.command_error().why()).EndObject();
  } else {
    json.Key("status").Raw(ipc::ToJson(r.status()));
  }
  json.EndObject();
  return json.str();
}

void PrintTable(const std::vector<std::string>& headers,
                const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(headers.size());
  for (std::size_t i = 0; i < headers.size(); ++i) width[i] = headers[i].size();
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], r[i].size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      out += cells[i];
      if (i + 1 < cells.size()) out += std::string(width[i] - cells[i].size() + 2, ' ');
    }
    std::cout << out << "\n";
  };
  line(headers);
  std::vector<std::string> rule;
  for (auto w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (const auto& r : rows) line(r);
}

void PrintRows(const std::string& id, const pb::Schema& schema, std::uint64_t time, bool closed,
               double ms, const pb::PeekResponse& answer, const std::string& of,
               const std::function<void(JsonWriter&)>& extra) {
  const auto& rows = answer.rows().rows();
  int arity = schema.columns_size();
  for (const auto& rc : rows) arity = std::max(arity, rc.row().datums_size());
  std::vector<std::string> headers;
  for (int i = 0; i < arity; ++i) headers.push_back(ColumnName(schema, i));
  const bool count_taken = std::find(headers.begin(), headers.end(), "count") != headers.end();
  const std::string count_header = count_taken ? "#count" : "count";
  std::uint64_t total = 0;
  for (const auto& rc : rows) total += rc.count();
  if (JsonOutput()) {
    JsonWriter json;
    json.BeginObject().Key("id").String(id);
    if (extra) extra(json);
    json.Key("time").UInt(time).Key("closed").Bool(closed);
    json.Key("latency_ms").Double(ms).Key("columns").BeginArray();
    for (const auto& h : headers) json.String(h);
    json.EndArray().Key("rows");
    RowsJson(json, answer.rows());
    json.EndObject();
    std::cout << json.str() << "\n";
    return;
  }
  headers.push_back(count_header);
  std::vector<std::vector<std::string>> cells;
  for (const auto& rc : rows) {
    std::vector<std::string> line;
    for (int j = 0; j < arity; ++j) {
      line.push_back(j < rc.row().datums_size() ? DatumText(rc.row().datums(j)) : "");
    }
    line.push_back(std::to_string(rc.count()));
    cells.push_back(std::move(line));
  }
  PrintTable(headers, cells);
  char latency[32];
  std::snprintf(latency, sizeof latency, "%.2f", ms);
  std::cout << "(" << total << (total == 1 ? " row" : " rows") << " of " << of << " at time "
            << time << (closed ? " (closed: its final contents)" : "") << ", " << latency
            << " ms)\n";
}

void PrintResponse(const pb::Response& r) {
  if (JsonOutput()) {
    std::cout << ResponseJson(r) << std::endl;
    return;
  }
  std::string text;
  if (r.has_frontiers()) {
    text = "frontiers " + r.frontiers().id() + " write " + FrontierText(r.frontiers().write());
  } else if (r.has_peek_response()) {
    const auto& p = r.peek_response();
    text = "peek " + p.uuid() + ": " +
           (p.has_error()      ? "error: " + p.error()
            : p.has_canceled() ? std::string("canceled")
                               : std::to_string(p.rows().rows_size()) + " distinct rows" +
                                     (p.rows().rows().empty() ? "" : ": " + RowsText(p.rows())));
  } else if (r.has_command_error()) {
    text = "refused " + r.command_error().what() + ": " + r.command_error().why();
  } else {
    text = std::string(ipc::ResponseName(r)) + " " + ipc::ToJson(r.status());
  }
  std::cout << text << std::endl;
}

}  // namespace tandem::ctl
