#!/usr/bin/env bash
# profile_peek.sh [BINDIR]: where a network peek's time goes, per thread. Runs `tandem-bench redis`
# from BINDIR (default build/ci/bin) and, 6 s into its Tandem cell (closed-loop point-lookup peeks
# of a two-runtime replica), counts for 5 s each thread's CPU time, context switches and system
# calls of the supervisor and both runtimes (`perf stat --per-thread`), then divides by the peeks
# answered in that window (the supervisor's tandem_peek_latency_seconds_count). BENCHMARKS.md
# ("peek-path", "The network peek's own share") shows the tables this prints.
#
# Needs perf (Debian: apt-get install linux-perf) and the right to trace (root, or
# kernel.perf_event_paranoid <= 1).
set -euo pipefail
BIN=${1:-build/ci/bin}
command -v perf >/dev/null || { echo "profile_peek.sh: needs perf (apt-get install linux-perf)" >&2; exit 69; }
OUT=$(mktemp -d /tmp/tandem-profile-peek-XXXXXX)
NAME=pp$$
"$BIN/tandem-bench" redis --duration 14 --warmup 2 --min-samples 1000 --name "$NAME" \
  > "$OUT/bench.txt" 2>&1 &
bench=$!
trap 'kill $bench 2>/dev/null || true' EXIT
sup=""
for _ in $(seq 100); do
  sup=$(pgrep -f "tandem-supervisor.*$NAME" | head -1 || true)
  [[ -n "$sup" ]] && break
  sleep 0.2
done
[[ -n "$sup" ]] || { echo "profile_peek.sh: no supervisor started" >&2; exit 1; }
sleep 6  # into the Tandem cell (the replica is built and measuring by then)
inter=$(pgrep -P "$sup" -f "role interactive")
maint=$(pgrep -P "$sup" -f "role maintenance")
http=$(tr '\0' ' ' < "/proc/$sup/cmdline" | grep -o 'internal-http-listen-addr[= ][^ ]*' |
       awk '{print $NF}' | sed 's/.*=//')
peeks() {
  exec 3<>"/dev/tcp/${http%:*}/${http##*:}"
  printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' >&3
  grep '^tandem_peek_latency_seconds_count' <&3 | awk '{print $2}'
  exec 3>&-
}
before=$(peeks)
perf stat -e task-clock,context-switches,raw_syscalls:sys_enter --per-thread \
  -p "$sup,$inter,$maint" -o "$OUT/stat.txt" -- sleep 5
after=$(peeks)
wait $bench || true
trap - EXIT
python3 - "$OUT/stat.txt" "$before" "$after" <<'EOF'
import collections, re, sys
path, before, after = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
n = after - before
threads = collections.defaultdict(dict)
for line in open(path):
    m = re.match(r'\s*(\S+)\s+([\d.,]+)\s+(msec task-clock|context-switches|raw_syscalls:sys_enter)', line)
    if m:
        threads[m.group(1)][m.group(3)] = float(m.group(2).replace(',', ''))
print(f"{n:.0f} peeks in the window; per peek:")
print(f"{'thread':30} {'CPU us':>8} {'syscalls':>9} {'switches':>9}")
for name, d in sorted(threads.items(), key=lambda t: -t[1].get('msec task-clock', 0)):
    print(f"{name:30} {d.get('msec task-clock', 0) * 1000 / n:8.1f} "
          f"{d.get('raw_syscalls:sys_enter', 0) / n:9.1f} {d.get('context-switches', 0) / n:9.2f}")
EOF
echo "(raw perf output: $OUT/stat.txt; supervisor $sup, interactive $inter, maintenance $maint)"
