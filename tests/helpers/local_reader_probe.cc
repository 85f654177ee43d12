// tandem-test-local-reader: a local reader process for the fault tests
// (tests/integration/local_reader_test.cc). It attaches to a replica's segment with LocalReader and
//   attach SEGMENT                 prints "attached" (exit 0), or "error: <code>: <message>" (2);
//   stop-mid-read SEGMENT INDEX    scans INDEX at its latest time and, holding the read's
//                                  announcement, stops itself (SIGSTOP) at the first row; once
//                                  continued it finishes and prints "rows N" (exit 0).
// The test kills or continues it while it is stopped: a reader dying or hanging mid-read.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "client/local_reader.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s attach SEGMENT | stop-mid-read SEGMENT INDEX\n", argv[0]);
    return 64;
  }
  const std::string mode = argv[1];
  auto reader = tandem::LocalReader::Attach(argv[2]);
  if (!reader.ok()) {
    std::printf("error: %s\n", reader.status().ToString().c_str());
    return 2;
  }
  if (mode == "attach") {
    std::printf("attached\n");
    return 0;
  }
  if (mode != "stop-mid-read" || argc < 4) return 64;
  const auto id = tandem::GlobalId::Parse(argv[3]);
  if (!id) return 64;
  std::uint64_t rows = 0;
  auto t = (*reader)->Scan(*id, tandem::KeyRange::All(), std::nullopt, [&](const tandem::RowView&) {
    if (rows++ == 0) raise(SIGSTOP);  // mid-read: announced
    return true;
  });
  if (!t.ok()) {
    std::printf("error: %s\n", t.status().ToString().c_str());
    return 2;
  }
  std::printf("rows %llu\n", static_cast<unsigned long long>(rows));
  return 0;
}
