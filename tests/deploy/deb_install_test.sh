#!/usr/bin/env bash
# Deploy.TheDebInstallsIntoACleanDebianAndRunsAReplica (issue 18, acceptance 1): builds the .deb
# with CPack from the build tree, installs it with apt into a clean Debian 12 root (debootstrap
# --variant=minbase: nothing of this machine's libraries), and from the installed paths only:
# --help of every binary, the man pages and the unit in place, the `tandem` user made, then a
# short replica — tandem-supervisor as user tandem, tandem-ctl creating a source and peeking it —
# stopped with SIGTERM (exit 0, its segment removed).
#
#   tests/deploy/deb_install_test.sh BUILD_DIR
#
# The root is cached as a tarball in BUILD_DIR/deploy-cache (a rerun skips debootstrap). Mounts
# (/proc, the host's /dev/shm) live in a private mount namespace (unshare), so they go with this
# script however it ends. Needs root, debootstrap, dpkg-dev (dpkg-shlibdeps), network to the
# Debian mirror.
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
mirror=${TANDEM_DEBIAN_MIRROR:-http://deb.debian.org/debian}

if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP: needs root (debootstrap, chroot)" >&2
  exit 77
fi

# Offline (no mirror): a skip, not a failure — the test needs the network by design.
if ! curl -fsS --max-time 20 -o /dev/null "$mirror/dists/bookworm/Release"; then
  echo "SKIP: the Debian mirror $mirror is not reachable" >&2
  exit 77
fi

work=$(mktemp -d /tmp/tandem-deb-test.XXXXXX)
seg=tandem.test.deb$$
cleanup() {
  local rc=$?
  pkill -KILL -f "tandem-supervisor --replica-id deb$$" 2>/dev/null || true
  rm -f "/dev/shm/$seg" "/dev/shm/$seg.readers"
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT

step() { printf '==> %s\n' "$*"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

step "packaging (cpack)"
(cd "$work" && cpack --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$work"/pkg/tandem_*.deb)
dpkg-deb --info "$deb" | sed -n "/Package:/,/Description:/p"
depends=$(dpkg-deb --field "$deb" Depends)
for lib in libzmq5 libprotobuf32 adduser; do
  [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib: $depends"
done

step "a clean Debian 12 root"
cache=$build/deploy-cache/bookworm-minbase.tar
root=$work/root
mkdir -p "$root" "$(dirname "$cache")"
if [[ -f $cache ]]; then
  tar -xf "$cache" -C "$root"
else
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; fail "debootstrap failed"; }
  tar -cf "$cache.tmp" -C "$root" . && mv "$cache.tmp" "$cache"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/"

# Everything in the root runs inside one private mount namespace.
# The replica binds port 0 for both endpoints and names them in --endpoints-file (no port picked
# here that another process could take first).
export root seg deb_name=${deb##*/} replica=deb$$
unshare --mount --propagation private bash -euo pipefail -c '
  mount -t proc proc "$root/proc"
  mkdir -p "$root/dev/shm"
  mount --bind /dev/shm "$root/dev/shm"
  in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
  fail() { echo "FAIL: $*" >&2; exit 1; }

  echo "==> apt-get install the package (its dependencies from the mirror)"
  apt_bounded="-o Acquire::http::Timeout=30 -o Acquire::Retries=2"
  in_root apt-get $apt_bounded update -qq >/dev/null
  in_root env DEBIAN_FRONTEND=noninteractive apt-get $apt_bounded install -y -qq --no-install-recommends \
    "/tmp/$deb_name" >/tmp/tandem-deb-apt.$$ 2>&1 || { tail -30 /tmp/tandem-deb-apt.$$ >&2; fail "apt-get install"; }
  rm -f /tmp/tandem-deb-apt.$$

  echo "==> the installed paths"
  for b in tandem-supervisor tandem-worker tandem-ctl tandem-shm tandem-bench; do
    [[ -x $root/usr/bin/$b ]] || fail "/usr/bin/$b missing"
  done
  for b in tandem-supervisor tandem-ctl tandem-shm; do
    in_root "$b" --help >/dev/null || fail "$b --help"
    [[ -f $root/usr/share/man/man1/$b.1.gz ]] || fail "no man page for $b"
    [[ -f $root/usr/share/bash-completion/completions/$b ]] || fail "no completion for $b"
  done
  [[ -f $root/usr/share/man/man1/tandem-bench.1.gz ]] || fail "no man page for tandem-bench"
  [[ -f "$root/usr/lib/systemd/system/tandem-supervisor@.service" ]] || fail "no systemd unit"
  [[ -d $root/etc/tandem ]] || fail "no /etc/tandem"
  in_root id tandem >/dev/null || fail "no user tandem"
  in_root ldd /usr/bin/tandem-supervisor | grep "not found" && fail "a library is missing"

  echo "==> a short replica, from the installed binaries, as user tandem"
  mkdir -p "$root/tmp/rt" && chown tandem: "$root/tmp/rt" 2>/dev/null || chroot "$root" chown tandem:tandem /tmp/rt
  chroot --userspec=tandem:tandem "$root" /usr/bin/env -i PATH=/usr/bin:/bin \
    /usr/bin/tandem-supervisor --replica-id "$replica" --shm-name "$seg" --shm-size 64MiB \
      --controller-listen-addr "tcp://127.0.0.1:0" --internal-http-listen-addr "127.0.0.1:0" \
      --endpoints-file /tmp/rt/endpoints --runtime-dir /tmp/rt \
      --grace-period 2 >"$root/tmp/supervisor.log" 2>&1 &
  sup=$!
  ready=0
  for _ in $(seq 1 300); do  # 30 s at most
    if [[ -f $root/tmp/rt/endpoints ]]; then
      controller_port=$(sed -n "s/^controller_listen_addr=.*://p" "$root/tmp/rt/endpoints")
      http_port=$(sed -n "s/^internal_http_listen_addr=.*://p" "$root/tmp/rt/endpoints")
      if curl -fsS "http://127.0.0.1:$http_port/readyz" >/dev/null 2>&1; then ready=1; break; fi
    fi
    kill -0 $sup 2>/dev/null || break
    sleep 0.1
  done
  [[ $ready == 1 ]] || { cat "$root/tmp/supervisor.log" >&2; fail "the replica never became ready"; }
  ctl() { chroot --userspec=tandem:tandem "$root" /usr/bin/env -i PATH=/usr/bin:/bin \
            /usr/bin/tandem-ctl --endpoint "tcp://127.0.0.1:$controller_port" --state /tmp/rt/ctl.state "$@"; }
  ctl create-source u1 --generator key_value --keys 10 --updates-per-tick 10 --tick-interval-us 1000 ||
    fail "create-source"
  for _ in $(seq 1 50); do  # the generator ticks every millisecond: rows come at once
    out=$(ctl peek u1 --json) || fail "peek: $out"
    [[ $out == *\"count\"* ]] && break
  done
  echo "$out" | cut -c1-300
  [[ $out == *\"count\"* ]] || fail "peek answered no rows: $out"
  kill -TERM $sup
  rc=0; wait $sup || rc=$?
  [[ $rc == 0 ]] || { cat "$root/tmp/supervisor.log" >&2; fail "supervisor exit $rc after SIGTERM"; }
  [[ ! -e /dev/shm/$seg ]] || fail "the segment outlived the replica"
'
step "PASS"
