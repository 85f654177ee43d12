#!/usr/bin/env bash
# Deploy.MetricsPassPromtool (issue 18): a real replica from the build, driven a little (sources, a
# table write, peeks, a one-shot query) so histograms and labelled families carry samples; its
# /metrics must pass `promtool check metrics` (Debian's prometheus package) with no complaint —
# promtool exits 0 even for some lint findings, so any output fails too. A negative case shows
# promtool here is able to fail: a counter without _total.
#
#   tests/deploy/promtool_test.sh BIN_DIR
set -euo pipefail
source "$(dirname "$0")/live_replica.sh"
command -v promtool >/dev/null || die "promtool missing (apt-get install prometheus)"

replica_curve  # as deployed (Kubernetes): the tandem_curve_* families are checked too
replica_start
replica_drive
replica_scrape "$work/metrics.txt"
replica_stop
echo "scraped $(grep -c '^tandem_' "$work/metrics.txt") samples of $(grep -c '^# TYPE' "$work/metrics.txt") families"
for family in tandem_peek_latency_seconds_bucket tandem_segment_bytes tandem_writes_total; do
  grep -q "^$family" "$work/metrics.txt" || die "no $family sample: was the replica driven?"
done

rc=0
out=$(promtool check metrics <"$work/metrics.txt" 2>&1) || rc=$?
if [[ $rc != 0 || -n $out ]]; then
  echo "$out" >&2
  die "promtool check metrics: exit $rc"
fi
echo "ok   promtool check metrics: clean"

# Negative: a counter named without _total must be flagged.
printf '# HELP tandem_bad a counter\n# TYPE tandem_bad counter\ntandem_bad 1\n' >"$work/bad.txt"
rc=0
out=$(promtool check metrics <"$work/bad.txt" 2>&1) || rc=$?
[[ $rc != 0 || -n $out ]] || die "promtool accepted a counter without _total: this check cannot fail"
echo "ok   promtool flags a bad exposition: $out"
echo "2 passed, 0 failed"
