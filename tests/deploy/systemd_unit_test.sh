#!/usr/bin/env bash
# Deploy.SystemdUnitVerifiesClean (issue 18): deploy/systemd/tandem-supervisor@.service, as the
# package installs it, passes `systemd-analyze verify` with no output at all — verify exits 0 on an
# unknown directive or a value it cannot parse (it only warns), so any line it prints fails here.
# It runs in a temporary root (--root) holding the unit unmodified at /usr/lib/systemd/system, the
# build's tandem-supervisor at /usr/bin (verify checks ExecStart's binary) and this host's own
# systemd units (the targets the unit depends on): the instance tandem-supervisor@r1.service is
# verified. Negative cases show verify here able to fail (an unknown directive, a missing binary).
# Then what verify cannot know: RestartPreventExitStatus= is exactly the supervisor's exit codes
# for bad usage (64) and impossible configuration (78) — read from --help, and shown by running
# it —, ExecStart's flags exist in --help, TimeoutStopSec exceeds the grace period, and the example
# env file names only real TANDEM_* variables and starts a replica.
#
#   tests/deploy/systemd_unit_test.sh BIN_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/live_replica.sh"
unit_src=$here/../../deploy/systemd/tandem-supervisor@.service
env_src=$here/../../deploy/systemd/tandem.env
units=/usr/lib/systemd/system
command -v systemd-analyze >/dev/null || die "systemd-analyze missing (apt-get install systemd)"
[[ -d $units ]] || die "$units missing (apt-get install systemd)"
passed=0
ok() {
  echo "ok   $*"
  passed=$((passed + 1))
}

make_root() {  # make_root DIR UNIT_FILE [no-binary]
  local root=$1
  mkdir -p "$root/usr/lib/systemd" "$root/usr/bin" "$root/etc/systemd/system"
  ln -s usr/lib "$root/lib"
  ln -s usr/bin "$root/bin"
  cp -a "$units" "$root/usr/lib/systemd/"
  cp "$2" "$root/usr/lib/systemd/system/tandem-supervisor@.service"
  [[ ${3:-} == no-binary ]] || cp "$bin_dir/tandem-supervisor" "$root/usr/bin/"
  cp "$(type -P kill)" "$root/usr/bin/kill"  # ExecReload's /bin/kill
}
verify() {  # verify ROOT → its output (stdout and stderr); the man page is the .deb test's
  systemd-analyze verify --man=no --generators=no --root="$1" tandem-supervisor@r1.service 2>&1 ||
    echo "(systemd-analyze exited $?)"
}

# --- systemd-analyze verify --------------------------------------------------------------------
make_root "$work/root" "$unit_src"
out=$(verify "$work/root")
[[ -z $out ]] || die "systemd-analyze verify is not clean:"$'\n'"$out"
ok "systemd-analyze verify tandem-supervisor@r1.service: no warning, no error"

sed 's/^KillMode=mixed$/&\nFrobnicate=yes/' "$unit_src" >"$work/broken.service"
grep -q '^Frobnicate=yes' "$work/broken.service" || die "could not break the unit copy"
make_root "$work/root-broken" "$work/broken.service"
out=$(verify "$work/root-broken")
[[ $out == *Frobnicate* ]] || die "verify accepted an unknown directive: this check cannot fail ($out)"
ok "negative: an unknown directive is reported ($(head -1 <<<"$out" | sed 's/.*: //'))"

make_root "$work/root-nobin" "$unit_src" no-binary
out=$(verify "$work/root-nobin")
[[ $out == *tandem-supervisor* ]] || die "verify accepted a missing ExecStart binary ($out)"
ok "negative: a missing ExecStart binary is reported"

# --- what verify cannot know -------------------------------------------------------------------
value() { sed -n "s/^$1=//p" "$unit_src" | tail -1; }
help=$("$bin_dir/tandem-supervisor" --help)

[[ $(value RestartPreventExitStatus) == "64 78" ]] ||
  die "RestartPreventExitStatus=$(value RestartPreventExitStatus), expected 64 78"
grep -Eq '^ +64 +bad usage' <<<"$help" || die "--help no longer says 64 is bad usage"
grep -Eq '^ +78 +impossible configuration' <<<"$help" ||
  die "--help no longer says 78 is impossible configuration"
rc=0
"$bin_dir/tandem-supervisor" --no-such-flag >/dev/null 2>&1 || rc=$?
[[ $rc == 64 ]] || die "an unknown flag exits $rc, not 64"
rc=0
"$bin_dir/tandem-supervisor" --replica-id "x$$" --shm-name "tandem.test.x$$" \
  --controller-listen-addr tcp://0.0.0.0:1 --internal-http-listen-addr 127.0.0.1:1 \
  --runtime-dir "$work/x78" >/dev/null 2>&1 || rc=$?
[[ $rc == 78 ]] || die "a non-loopback endpoint without CURVE exits $rc, not 78"
ok "RestartPreventExitStatus=64 78: bad usage (exit 64) and impossible configuration (exit 78)"

for k in Type=notify NotifyAccess=main KillMode=mixed Restart=on-failure User=tandem \
  RuntimeDirectory=tandem/%i StateDirectory=tandem/%i ProtectSystem=strict NoNewPrivileges=yes \
  CapabilityBoundingSet= RemoveIPC=yes; do
  grep -qx "$k" "$unit_src" || die "the unit lacks $k"
done
[[ -n $(value WatchdogSec) ]] || die "no WatchdogSec="
for k in PrivateDevices PrivateIPC; do
  ! grep -q "^$k=yes" "$unit_src" || die "$k=yes would hide the segment from local readers"
done
ok "Type=notify with a watchdog, KillMode=mixed, the directories, the hardening (/dev/shm shared)"

exec_start=$(value ExecStart)
for flag in $(grep -o -- '--[a-z-]*' <<<"$exec_start"); do
  grep -q -- "^ *$flag " <<<"$help" || die "ExecStart's $flag is not in tandem-supervisor --help"
done
[[ $exec_start == /usr/bin/tandem-supervisor\ * ]] || die "ExecStart is not /usr/bin/tandem-supervisor"
ok "ExecStart's flags exist: $(grep -o -- '--[a-z-]*' <<<"$exec_start" | tr '\n' ' ')"

seconds() { sed -E 's/^([0-9.]+)s?$/\1/' <<<"$1"; }
stop=$(seconds "$(value TimeoutStopSec)")
grace=$(sed -nE 's/.*--grace-period FLOAT:FLOAT in \[[^]]*\]=([0-9.]+).*/\1/p' <<<"$help")
env_grace=$(sed -n 's/^TANDEM_GRACE_PERIOD=//p' "$env_src")
[[ -n $grace ]] || die "no --grace-period default in --help"
for g in "$grace" ${env_grace:+"$env_grace"}; do
  python3 -c "import sys; sys.exit(0 if float('$stop') > float('$g') + 2 else 1)" ||
    die "TimeoutStopSec=$stop does not exceed the grace period $g (+2 s to clean up)"
done
ok "TimeoutStopSec=${stop}s exceeds the grace period (${grace} s; env file: ${env_grace:-unset})"

# --- the example env file ------------------------------------------------------------------------
known=$(grep -o 'Env:TANDEM_[A-Z_]*' <<<"$help" | sed 's/Env://'; printf 'TANDEM_PARAMS\nTANDEM_REPLICA_PARAMS\n')
for name in $(grep -oE '^#?TANDEM_[A-Z_]+=' "$env_src" | tr -d '#='); do
  grep -qx "$name" <<<"$known" || die "tandem.env names $name, which tandem-supervisor does not read"
done
# Its settings start a replica (the unit's own flags and this test's ports win over the file).
while IFS= read -r line; do
  [[ $line =~ ^(TANDEM_[A-Z_]+)=(.*)$ ]] && export "${BASH_REMATCH[1]}=${BASH_REMATCH[2]}"
done <"$env_src"
unset TANDEM_CONTROLLER_LISTEN_ADDR TANDEM_INTERNAL_HTTP_LISTEN_ADDR
replica_start
replica_stop
ok "tandem.env names only variables the supervisor reads, and its settings start a replica"

echo "$passed passed, 0 failed"
