# Sourced by the deploy tests that need a real replica (promtool_test.sh,
# grafana_dashboard_test.sh, systemd_unit_test.sh): start one from the build on loopback ports
# the kernel picks, with a unique segment name (tandem.test.*), wait for /readyz (bounded), drive a little
# of everything through tandem-ctl so the metric families carry samples, scrape /metrics, stop it
# with SIGTERM. An EXIT trap kills what is left and removes the segment and the work directory.
#
#   source tests/deploy/live_replica.sh BIN_DIR
#   replica_curve                                # next replica_start: CURVE keys, as deployed
#   replica_start [extra supervisor flags...]    # sets replica_pid, controller_port, http_port
#   replica_drive                                # sources, a table write, peeks, a one-shot query
#   replica_scrape FILE                          # /metrics into FILE
#   replica_stop                                 # SIGTERM, wait; fails unless it exits 0

bin_dir=$(cd "${1:?usage: $0 BIN_DIR (the bin directory of the build)}" && pwd)
work=$(mktemp -d "/tmp/tandem-deploy-test.XXXXXX")
replica_id="deploy$$"
replica_seg="tandem.test.deploy$$"
replica_pid=""
curve_flags=()
ctl_curve=()

replica_cleanup() {
  local rc=$?
  if [[ -n $replica_pid ]] && kill -0 "$replica_pid" 2>/dev/null; then
    kill -KILL "$replica_pid" 2>/dev/null || true
    wait "$replica_pid" 2>/dev/null || true
  fi
  rm -f "/dev/shm/$replica_seg" "/dev/shm/$replica_seg.readers"
  rm -rf "$work"
  exit "$rc"
}
trap replica_cleanup EXIT

die() {
  echo "FAIL: $*" >&2
  exit 1
}

http_get() {  # http_get PATH → body on stdout; fails unless 200
  curl -fsS --max-time 5 "http://127.0.0.1:$http_port$1"
}

replica_curve() {  # keys made with tandem-ctl keygen, as docs/security.md sets them up
  "$bin_dir/tandem-ctl" keygen "$work/server.key" >/dev/null || die "tandem-ctl keygen (server)"
  "$bin_dir/tandem-ctl" keygen "$work/operator.key" >/dev/null || die "tandem-ctl keygen (client)"
  install -d -m 700 "$work/authorized"
  cp "$work/operator.key.pub" "$work/authorized/"
  curve_flags=(--curve-secret-key "$work/server.key" --curve-authorized-keys "$work/authorized")
  ctl_curve=(--curve-server-key "$work/server.key.pub" --curve-client-key "$work/operator.key")
}

replica_start() {
  # Port 0 for both endpoints: the supervisor binds what the kernel gives and names it in
  # --endpoints-file (no port picked here that another process could take first).
  rm -f "$work/endpoints"
  "$bin_dir/tandem-supervisor" --replica-id "$replica_id" --shm-name "$replica_seg" \
    --shm-size 32MiB --controller-listen-addr "tcp://127.0.0.1:0" \
    --internal-http-listen-addr "127.0.0.1:0" --endpoints-file "$work/endpoints" \
    --runtime-dir "$work/run" --data-dir "$work/data" --grace-period 2 "${curve_flags[@]}" "$@" \
    >"$work/supervisor.log" 2>&1 &
  replica_pid=$!
  local _
  for _ in $(seq 1 300); do  # 30 s at most
    if [[ -f $work/endpoints ]]; then
      controller_port=$(sed -n 's/^controller_listen_addr=.*://p' "$work/endpoints")
      http_port=$(sed -n 's/^internal_http_listen_addr=.*://p' "$work/endpoints")
      if http_get /readyz >/dev/null 2>&1; then return 0; fi
    fi
    kill -0 "$replica_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$work/supervisor.log" >&2
  die "the replica never became ready (/readyz)"
}

ctl() {
  "$bin_dir/tandem-ctl" --endpoint "tcp://127.0.0.1:$controller_port" --state "$work/ctl.state" \
    --timeout 10 "${ctl_curve[@]}" "$@"
}

replica_drive() {
  ctl create-source u1 --generator key_value --keys 100 --updates-per-tick 10 \
    --tick-interval-us 1000 >/dev/null || die "create-source u1"
  ctl create-source u2 --table --schema "k:int64,v:string?" --upsert-key k >/dev/null ||
    die "create-source u2 (a table)"
  ctl write u2 --upsert '1,"x"' >/dev/null || die "write u2"
  local _
  for _ in 1 2 3; do
    ctl peek u1 --limit 2 >/dev/null || die "peek u1"
  done
  ctl query --on u1 --aggregate count >/dev/null || die "query"
}

replica_scrape() {
  http_get /metrics >"$1" || die "GET /metrics"
}

replica_stop() {
  kill -TERM "$replica_pid"
  local rc=0
  wait "$replica_pid" || rc=$?
  replica_pid=""
  if [[ $rc != 0 ]]; then
    cat "$work/supervisor.log" >&2
    die "the supervisor exited $rc after SIGTERM (expected 0)"
  fi
  [[ ! -e /dev/shm/$replica_seg ]] || die "the segment outlived the replica"
}
