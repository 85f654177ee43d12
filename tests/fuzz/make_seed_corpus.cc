// Writes the seed corpus of fuzz_decode_validate.cc into a directory
// (tests/fuzz/corpus/decode_validate/ is its checked-in output): the encoding of one valid command
// of every kind, a few that the primed validator refuses, a few that do not decode, and a few JSON
// commands. Every input is also checked as an observer's command by the target.
//
// Usage: tandem-fuzz-make-corpus <directory>    (files are overwritten, others left alone)
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "ipc/codec.h"
#include "unit/protocol_samples.h"

namespace {

using namespace tandem::ipc;           // NOLINT(google-build-using-namespace)
using namespace tandem::ipc::samples;  // NOLINT(google-build-using-namespace)

bool Write(const std::filesystem::path& dir, const std::string& name, const std::string& bytes) {
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <directory>\n", argv[0]);
    return 64;
  }
  const std::filesystem::path dir(argv[1]);
  bool ok = true;
  for (const auto& [name, command] : AllCommands()) {
    ok &= Write(dir, std::string(name) + ".bin", Encode(command));
  }

  // A maintained dataflow importing index u9 (accepted), and a peek of the primed one-shot t9.
  ok &= Write(dir, "create_dataflow_index_import.bin", Encode(SecondaryDataflow()));
  ok &= Write(dir, "peek_primed_one_shot.bin", Encode(PeekAt("one-shot-9", "t9", 5)));

  // Valid encodings the primed validator (samples::ImportingEpoch()) refuses, each for a
  // different reason. (allow_compaction_drop.bin is one too: both importers hold u9.)
  pb::Command one_shot = SecondaryDataflowFromSources();
  Desc(one_shot)->set_class_(pb::ONE_SHOT_READ);  // until is not as_of + 1, and it has a source
  ok &= Write(dir, "refused_one_shot_read.bin", Encode(one_shot));
  pb::Command compacted = SecondaryDataflow();
  Desc(compacted)->mutable_as_of()->set_elements(0, 3);  // below u9's allowed compaction [5]
  ok &= Write(dir, "refused_maintained_import_below_compaction.bin", Encode(compacted));
  ok &= Write(dir, "refused_one_shot_maintained_export.bin", Encode(OneShotOfU9(5, "u70")));
  ok &= Write(dir, "refused_peek_one_shot_other_time.bin", Encode(PeekAt("one-shot-9", "t9", 6)));
  pb::Command bad_key = Peek();
  *bad_key.mutable_peek()->mutable_keys(0)->mutable_datums(0) = StringDatum("3");
  ok &= Write(dir, "refused_peek_key_type.bin", Encode(bad_key));
  pb::Command null_key = Peek();
  null_key.mutable_peek()->set_id("u11");
  *null_key.mutable_peek()->mutable_keys(0)->mutable_datums(0) = NullDatum();
  null_key.mutable_peek()->mutable_keys()->RemoveLast();
  null_key.mutable_peek()->clear_mfp();
  ok &= Write(dir, "peek_nullable_key.bin", Encode(null_key));
  // Only an index can be compacted or dropped: u1 is a source, u4 a view.
  ok &= Write(dir, "refused_allow_compaction_of_source.bin", Encode(AllowCompaction("u1", {3})));
  ok &= Write(dir, "refused_drop_of_view.bin", Encode(Drop("u4")));
  pb::Command range = EmptyDataflow("range");
  *Desc(range)->add_source_imports() = KeyValueImport("u30");
  *Desc(range)->add_objects_to_build() =
      Build("u31", MfpPlan(GetPlan("u30"), Mfp({Col(7)}, {}, {})));
  ok &= Write(dir, "refused_column_range.bin", Encode(range));

  // Tables and writes (DESIGN §9), against the primed tables u40 (plain) and u42 (upsert by k).
  ok &= Write(dir, "create_dataflow_tables.bin", Encode(TableDataflow()));
  ok &= Write(dir, "write_table.bin", Encode(WriteU40()));
  ok &= Write(dir, "write_table_upsert.bin", Encode(WriteU42()));
  ok &= Write(dir, "hello_writer.bin", Encode(WriterHello()));
  pb::Command sources = EmptyDataflow("file sources");
  *Desc(sources)->add_source_imports() = CsvImport("u70", {0});
  *Desc(sources)->add_source_imports() = JsonLinesImport("u71", {0, 2});
  *Desc(sources)->add_source_imports() = TableImport("u72", {2, 0});
  *Desc(sources)->add_index_exports() = Export("u73", "u70", {0});
  ok &= Write(dir, "create_dataflow_csv_json_lines_upsert.bin", Encode(sources));
  ok &= Write(dir, "refused_write_unknown_table.bin",
              Encode(WriteTable("w-u9", "u99", {RowUpdate(TableRow(1))})));
  ok &= Write(dir, "refused_write_not_a_table.bin",
              Encode(WriteTable("w-u3", "u3", {RowUpdate(TableRow(1))})));
  ok &= Write(dir, "refused_write_delete_on_plain.bin",
              Encode(WriteTable("w-del", "u40", {Delete(MakeRow({IntDatum(1)}))})));
  ok &=
      Write(dir, "refused_write_row_type.bin",
            Encode(WriteTable("w-type", "u42",
                              {Upsert(MakeRow({StringDatum("1"), NullDatum(), FloatDatum(2)}))})));
  ok &= Write(dir, "refused_write_zero_diff.bin",
              Encode(WriteTable("w-zero", "u40", {RowUpdate(TableRow(1), 0)})));
  pb::Command counter_upsert = EmptyDataflow("counter upsert");
  *Desc(counter_upsert)->add_source_imports() = CounterImport("u74");
  Desc(counter_upsert)->mutable_source_imports(0)->add_upsert_key(0);
  *Desc(counter_upsert)->add_index_exports() = Export("u75", "u74", {0});
  ok &= Write(dir, "refused_upsert_key_on_counter.bin", Encode(counter_upsert));
  ok &= Write(dir, "write_response.bin", Encode(WriteAcknowledged()));
  ok &= Write(dir, "json_write_table_upsert.json", ToJson(WriteU42()));

  // Bytes that do not decode.
  const std::string peek = Encode(Peek());
  ok &= Write(dir, "malformed_truncated_peek.bin", peek.substr(0, peek.size() - 3));
  ok &= Write(dir, "malformed_unknown_kind.bin", std::string("\x98\x06\x01", 3));
  ok &= Write(dir, "malformed_garbage.bin", std::string("\xff\x00\x12\x34\x0a\xff\xff\xff\x7f", 9));

  // JSON.
  ok &= Write(dir, "json_hello.json", ToJson(Hello()));
  ok &= Write(dir, "json_allow_compaction.json", ToJson(AllowCompaction("u10", {9})));
  ok &= Write(dir, "json_hello_observer.json", ToJson(ObserverHello()));
  ok &= Write(dir, "json_goodbye.json", ToJson(Goodbye()));

  if (!ok) {
    std::fprintf(stderr, "could not write the corpus into %s\n", argv[1]);
    return 1;
  }
  return 0;
}
