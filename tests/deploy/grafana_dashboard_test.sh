#!/usr/bin/env bash
# Deploy.GrafanaDashboardUsesOnlyExportedMetrics (issue 18): deploy/grafana/tandem-dashboard.json
# parses, and every metric and label its queries name is in the /metrics of a live replica from the
# build (with CURVE, as deployed, so the tandem_curve_* families exist; driven a little so labelled
# families carry samples) — a metric renamed in supervisor/metric_names.h fails here. Its queries
# must also parse as PromQL (`promtool check rules`, Grafana's variables replaced).
#
#   tests/deploy/grafana_dashboard_test.sh BIN_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/live_replica.sh"
command -v promtool >/dev/null || die "promtool missing (apt-get install prometheus)"

replica_curve
replica_start
replica_drive
replica_scrape "$work/metrics.txt"
replica_stop
grep -q '^# TYPE tandem_curve_refused_total' "$work/metrics.txt" || die "no CURVE metrics: CURVE off?"

python3 "$here/grafana_dashboard_check.py" "$here/../../deploy/grafana/tandem-dashboard.json" \
  "$work/metrics.txt" "$work/dashboard-rules.json"
out=$(promtool check rules "$work/dashboard-rules.json" 2>&1) || {
  echo "$out" >&2
  die "a dashboard query is not valid PromQL"
}
echo "ok   promtool check rules: every query parses ($(grep -o 'SUCCESS: [0-9]* rules' <<<"$out"))"
