// load: the rows of a CSV or JSON-lines file written into a table, in a writer session
// (Hello{observer, writer}). The file is parsed fully first, with the sources' own formats
// (ipc/formats/csv.h, json_lines.h): a bad line is reported with its number and nothing is
// sent. Then batches of up to 1000 rows (or 1 MiB of the file) go out as WriteTables, up to 8 in
// flight, each with a deterministic uuid — "load-" + FNV-1a 64 of the table id, the batch's index
// and its bytes — so running an interrupted load again applies each batch once (the table
// answers a uuid it has with its first time). The answers are recorded per replica beside the
// state file, as a write's are (controller/write_ledger.h).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "ipc/formats/csv.h"
#include "ipc/formats/format_values.h"
#include "ipc/formats/json_lines.h"
#include "ipc/formats/log_parse.h"
#include "ipc/rows.h"
#include "tools/ctl/commands/commands.h"
#include "tools/ctl/session.h"

namespace tandem::ctl {
namespace {

constexpr std::size_t kBatchRows = 1000;
constexpr std::size_t kBatchBytes = std::size_t{1} << 20;
constexpr std::size_t kInFlight = 8;
constexpr std::size_t kErrorsShown = 10;

struct LoadOptions {
  std::string id, file;
  std::optional<std::string> format;
};

struct Batch {
  pb::Command command;  // a WriteTable
  std::string bytes;    // the file's bytes of its records
  std::uint64_t first_line = 0, last_line = 0;
  std::size_t rows = 0;
};

std::uint64_t Fnv64(std::uint64_t h, std::string_view bytes) {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string BatchUuid(const std::string& table, std::size_t index, const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  h = Fnv64(h, table);
  h = Fnv64(h, std::string_view("\0", 1));
  h = Fnv64(h, std::to_string(index));
  h = Fnv64(h, std::string_view("\0", 1));
  h = Fnv64(h, bytes);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string("load-") + hex;
}

pb::TableUpdate ToUpdate(const ipc::SourceRecord& r) {
  pb::TableUpdate u;
  pb::Row* row = nullptr;
  switch (r.kind) {
    case ipc::SourceRecord::Kind::kUpdate:
      u.mutable_update()->set_diff(r.diff);
      row = u.mutable_update()->mutable_row();
      break;
    case ipc::SourceRecord::Kind::kUpsert:
      row = u.mutable_upsert();
      break;
    case ipc::SourceRecord::Kind::kDelete:
      row = u.mutable_delete_();
      break;
  }
  for (const Datum& d : r.row) *row->add_datums() = ipc::ToProto(d);
  return u;
}

// The table `id` of the history: its source import.
std::optional<pb::SourceImport> TableOf(const History& h, const std::string& id) {
  if (!h.LiveIds().count(id)) return std::nullopt;
  std::optional<pb::SourceImport> found;
  for (const pb::Command& c : h.commands()) {
    if (!c.has_create_dataflow()) continue;
    for (const pb::SourceImport& s : c.create_dataflow().desc().source_imports()) {
      if (s.id() == id) found = s;
    }
  }
  return found;
}

// Cuts `text` into batches; bad lines go to `errors` ("csv line 7: …").
std::vector<Batch> Parse(const std::string& text, bool csv, const pb::SourceImport& table,
                         std::vector<std::string>* errors) {
  const std::vector<std::uint32_t> key(table.upsert_key().begin(), table.upsert_key().end());
  ipc::CsvReader reader(table.schema(), key);
  std::vector<Batch> batches;
  std::string record_bytes;  // the lines of the CSV record being read
  auto add = [&](ipc::SourceRecord r, std::uint64_t first, std::uint64_t last,
                 std::string_view bytes) {
    if (batches.empty() || batches.back().rows >= kBatchRows ||
        batches.back().bytes.size() >= kBatchBytes) {
      batches.emplace_back();
      batches.back().command.mutable_write_table()->set_id(table.id());
      batches.back().first_line = first;
    }
    Batch& b = batches.back();
    *b.command.mutable_write_table()->add_updates() = ToUpdate(r);
    b.bytes.append(bytes);
    b.bytes += '\n';
    b.last_line = last;
    ++b.rows;
  };
  auto csv_result = [&](ipc::CsvReader::Result r, std::uint64_t last) {
    if (r.record) {
      add(std::move(*r.record), r.line, last, record_bytes);
    } else {
      errors->push_back(std::move(r.error));
    }
    record_bytes.clear();
  };
  std::uint64_t n = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + start, nl - start);
    start = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (++n == 1) line = ipc::WithoutByteOrderMark(line);
    if (line.size() > ipc::kMaxLogLineBytes) {
      if (!csv) {
        errors->push_back("json line " + std::to_string(n) + ": longer than " +
                          std::to_string(ipc::kMaxLogLineBytes) + " bytes");
      } else if (auto r = reader.Overlong(n, ipc::kMaxLogLineBytes)) {
        csv_result(std::move(*r), n);
      }
      continue;
    }
    if (csv) {
      if (!record_bytes.empty()) record_bytes += '\n';
      record_bytes.append(line);
      auto r = reader.Line(line, n);
      if (!reader.broken().empty()) break;
      if (r) {
        csv_result(std::move(*r), n);
      } else if (!reader.in_record()) {
        record_bytes.clear();  // the header, or a blank line
      }
      continue;
    }
    auto r = ipc::ParseJsonLine(line, table.schema(), key);
    if (!r) continue;
    if (auto* rec = std::get_if<ipc::SourceRecord>(&*r)) {
      add(std::move(*rec), n, n, line);
    } else {
      errors->push_back("json line " + std::to_string(n) + ": " + std::get<std::string>(*r));
    }
  }
  if (csv) {
    if (auto r = reader.End()) csv_result(std::move(*r), n);
    if (!reader.broken().empty()) {
      errors->push_back(reader.broken());
    } else if (!reader.has_header()) {
      errors->push_back("csv line 1: the file has no header");
    }
  }
  for (std::size_t i = 0; i < batches.size(); ++i) {
    batches[i].command.mutable_write_table()->set_uuid(BatchUuid(table.id(), i, batches[i].bytes));
  }
  return batches;
}

std::string Lines(const Batch& b) {
  return b.first_line == b.last_line
             ? "line " + std::to_string(b.first_line)
             : "lines " + std::to_string(b.first_line) + "-" + std::to_string(b.last_line);
}

int RunLoad(const LoadOptions& o, const Globals& g, const History& h) {
  const std::string what = "load " + o.id;
  bool csv;
  const std::string& f = o.file;
  auto ends = [&](const std::string& ext) {
    return f.size() >= ext.size() && f.compare(f.size() - ext.size(), ext.size(), ext) == 0;
  };
  if (o.format) {
    if (*o.format != "csv" && *o.format != "jsonl")
      return Usage("--format " + *o.format + ": csv or jsonl");
    csv = *o.format == "csv";
  } else if (ends(".csv")) {
    csv = true;
  } else if (ends(".jsonl") || ends(".ndjson")) {
    csv = false;
  } else {
    return Usage("load " + f +
                 ": say --format csv|jsonl (the name ends in neither .csv, .jsonl nor .ndjson)");
  }
  const std::optional<pb::SourceImport> table = TableOf(h, o.id);
  if (!table) return Refused(what, o.id + " is not a source of the state file " + h.path());
  if (!table->source().has_table()) {
    return Refused(what, o.id + " is not a table (only a table source is written to)");
  }
  std::ifstream in(f, std::ios::binary);
  if (!in) return Fail(kExitFailed, "load: cannot read " + f);
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> errors;
  std::vector<Batch> batches = Parse(text.str(), csv, *table, &errors);
  if (!errors.empty()) {
    for (std::size_t i = 0; i < errors.size() && i < kErrorsShown; ++i) {
      std::cerr << "tandem-ctl: " << f << ": " << errors[i] << "\n";
    }
    return Refused(what, std::to_string(errors.size()) + " bad record" +
                             (errors.size() == 1 ? "" : "s") + " in " + f +
                             " (the first: " + errors.front() + "); nothing was written");
  }
  std::size_t rows = 0;
  for (const Batch& b : batches) rows += b.rows;
  if (batches.empty()) {
    PrintOk(
        what, [&](tools::JsonWriter& j) { j.Key("rows").Int(0).Key("batches").Int(0); },
        "nothing to load: " + f + " has no records");
    return kExitOk;
  }

  // A writer session: it never replays (a writer needs no history).
  Session session(g, h);
  if (auto code = session.Open(Session::Mode::kWrite)) return *code;
  ipc::ControllerClient* client = &session.client();
  // Every batch recorded before anything is sent: a load cut short at any point (even killed)
  // leaves its batches missing until their answers are recorded.
  {
    std::vector<AnsweredWrite> intents;
    for (const Batch& b : batches) intents.emplace_back().uuid = b.command.write_table().uuid();
    session.NoteWrites(o.id, std::move(intents));
  }

  const bool progress = isatty(STDERR_FILENO) && !JsonOutput();
  std::map<std::string, std::size_t> in_flight;  // uuid → batch
  std::vector<std::optional<std::uint64_t>> acked(batches.size());
  std::size_t next = 0, done = 0, acked_rows = 0;
  std::string failure;
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(g.timeout_s * 1000));
  auto last_answer = std::chrono::steady_clock::now();
  while (done < batches.size() && failure.empty() && !Interrupted()) {
    while (next < batches.size() && in_flight.size() < kInFlight) {
      client->Send(batches[next].command);
      in_flight[batches[next].command.write_table().uuid()] = next;
      ++next;
    }
    const auto left = timeout - (std::chrono::steady_clock::now() - last_answer);
    if (left.count() <= 0) {
      failure = "no answer from the replica for " + std::to_string(g.timeout_s) + " s";
      break;
    }
    auto r = client->Receive(std::chrono::duration_cast<std::chrono::milliseconds>(left));
    if (!r) {
      if (client->lost() || client->superseded()) failure = "the session with the replica ended";
      continue;
    }
    // The batch this answers (a WriteResponse, or the refusal naming the write's uuid).
    auto it = std::find_if(in_flight.begin(), in_flight.end(), [&](const auto& f) {
      return ipc::AnswersWrite(*r, batches[f.second].command.write_table());
    });
    if (it == in_flight.end()) continue;
    const std::size_t i = it->second;
    in_flight.erase(it);
    last_answer = std::chrono::steady_clock::now();
    if (r->has_command_error()) {
      const std::string& why = r->command_error().why();
      failure = "batch " + std::to_string(i) + " (" + Lines(batches[i]) + ") was refused: " + why +
                session.ExplainUnknown(why);
      break;
    }
    const pb::WriteResponse& w = r->write_response();
    if (w.has_error()) {
      failure = "batch " + std::to_string(i) + " (" + Lines(batches[i]) + "): " + w.error();
      break;
    }
    acked[i] = w.time();
    ++done;
    acked_rows += batches[i].rows;
    if (progress) {
      std::cerr << "\rloaded " << done << "/" << batches.size() << " batches (" << acked_rows << "/"
                << rows << " rows)" << std::flush;
    }
  }
  if (progress) std::cerr << "\n";
  // Every batch that may have been applied, with its replica's time if it was acknowledged: what
  // reads through several replicas need (Session::NoteWrites).
  std::vector<AnsweredWrite> noted;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const std::string& uuid = batches[i].command.write_table().uuid();
    if (!acked[i] && i < next && in_flight.count(uuid)) continue;  // maybe applied: stays missing
    AnsweredWrite& w = noted.emplace_back();
    w.uuid = uuid;
    if (acked[i]) {
      w.acknowledged[g.endpoint] = *acked[i];
    } else {
      w.applied_nowhere = true;  // refused, answered with an error, or never sent
    }
  }
  session.NoteWrites(o.id, std::move(noted));
  if (done == batches.size()) {
    std::uint64_t last = 0;
    for (const auto& t : acked) last = std::max(last, *t);
    PrintOk(
        what,
        [&](tools::JsonWriter& j) {
          j.Key("rows").Int(static_cast<std::int64_t>(rows));
          j.Key("batches").Int(static_cast<std::int64_t>(batches.size()));
          j.Key("time").UInt(last);
        },
        "loaded " + std::to_string(rows) + " rows in " + std::to_string(batches.size()) +
            " writes (the last at " + std::to_string(last) + ")");
    return kExitOk;
  }
  // What was and was not acknowledged (running the load again sends each batch's own uuid: the
  // acknowledged ones are not applied twice).
  std::string ok, missing;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    std::string& into = acked[i] ? ok : missing;
    into += (into.empty() ? "" : ", ") + std::to_string(i) + " (" + Lines(batches[i]) + ")";
  }
  if (failure.empty()) failure = "interrupted";
  return Fail(kExitFailed, what + ": " + failure + "; acknowledged batches: " +
                               (ok.empty() ? "none" : ok) + "; not acknowledged: " + missing +
                               " (run the same load again: acknowledged batches are not applied "
                               "twice)");
}

}  // namespace

Subcommand AddLoad(CLI::App& app) {
  auto o = std::make_shared<LoadOptions>();
  auto* sub = app.add_subcommand("load", "write the rows of a CSV or JSON-lines file into a table");
  sub->footer(
      "Parses FILE (.csv, .jsonl or .ndjson, or --format) with the csv/json_lines source formats\n"
      "and the table's schema and upsert key from the state file; a bad record is reported with\n"
      "its line and nothing is sent. Then writes it in batches of up to 1000 rows (1 MiB), 8 in\n"
      "flight, in a writer session. Each batch's uuid is derived from the table, its index and\n"
      "its bytes: running an interrupted load again applies every batch once. Exit 0 when every\n"
      "batch is acknowledged; 1 naming the acknowledged and unacknowledged batches otherwise.");
  sub->add_option("ID", o->id, "the table (u<n>)")->required();
  sub->add_option("FILE", o->file, "the file to load")->required();
  AddOptional(*sub, "--format", &o->format, "csv or jsonl (default: from FILE's name)");
  return {sub, [o](const Globals& g, History h) { return RunLoad(*o, g, h); },
          History::Access::kRead};
}

}  // namespace tandem::ctl
