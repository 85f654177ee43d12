#!/usr/bin/env bash
# Tandem's one entry point for people and CI. On a fresh Debian 12 machine each command installs
# what it needs (apt-get, skipped when already present), configures, builds and runs.
#
#   tools/run.sh test          build (warnings are errors) and run the test suite (not "slow")
#   tools/run.sh asan          build with ASan+UBSan and run the unit and integration tests
#   tools/run.sh tsan          build with clang + ThreadSanitizer (lock annotations checked) and
#                              run the unit tests and the real runtime's integration tests
#   tools/run.sh slow          run the long tests (labels slow, bench: the 60 s churn test, the
#                              tandem-bench smoke run, the randomized suites' thorough runs)
#   tools/run.sh stress [N]    the integration and adversarial tests N times each (default 3,
#                              until one fails) beside two CPU burners: a test whose outcome
#                              depends on the machine's speed or load fails here
#   tools/run.sh format-check  fail when a source file is not clang-formatted
#   tools/run.sh format        clang-format every source file in place
#   tools/run.sh bench         build and run the shared-memory microbenchmarks
#   tools/run.sh demo          the end-to-end demo: a replica under load, read while it works;
#                              then SQL through tandem-frontend (psql)
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake ninja-build g++ clang-format pkg-config libboost1.81-dev libgtest-dev libgmock-dev
          libbenchmark-dev libzmq3-dev cppzmq-dev libspdlog-dev libprotobuf-dev protobuf-compiler
          libcli11-dev clang libclang-rt-14-dev  # clang: the tsan and fuzz presets
          python3-dev pybind11-dev  # the LocalReader Python binding and its test
          liblmdb-dev  # tandem-bench local's mdb_get peer (optional: skipped without it)
          libgmp-dev  # the reference evaluator's exact numerics (gmpxx)
          help2man  # the man pages, made at build time (cmake/packaging.cmake)
          libpg-query-dev  # the frontend's SQL parser (PostgreSQL 15's grammar as a library)
          # PostgreSQL, the SQL suites' oracle and upstream (tests/postgres_server.h): libpq for
          # the tests' client, the server and psql, psycopg2 for python3. Here, not in
          # TEST_PACKAGES: the asan and tsan commands build and run the integration tests too.
          libpq-dev postgresql-15 python3-psycopg2
          python3-psycopg python3-asyncpg)  # the extended protocol's drivers (psycopg 3, asyncpg)
# What only the deploy tests (label deploy, in `test`) need: installed by `test` alone — on a host
# that runs systemd, Debian's prometheus package (promtool's) also starts a Prometheus server.
TEST_PACKAGES=(systemd prometheus curl  # systemd-analyze verify, promtool, /metrics
               mandoc groff-base  # the man pages' lint
               dpkg-dev debootstrap)  # the .deb (CPack runs dpkg-shlibdeps) and its install test
# (Node.js and npm for the deploy tests come from tools/install-test-tools.sh: a node already
# installed from elsewhere conflicts with Debian's npm package, so they are not listed here.)
JOBS="${TANDEM_JOBS:-$(nproc)}"
# Tests at once: one more than the cores. Many tests spend much of their time waiting on their
# processes (replicas starting, generators ticking, timeouts they check), so one more keeps the
# cores busy; every test must pass under that load (`tools/run.sh stress` checks it harder).
TEST_JOBS="${TANDEM_TEST_JOBS:-$((JOBS + 1))}"

log() { printf '\n==> %s\n' "$*"; }

# timed STAGE CMD...: run CMD (in a subshell, under set -e); when TANDEM_STAGE_TIMES names a file,
# append "STAGE<TAB>seconds<TAB>exit status" to it, which .ci/run prints as its stage table and
# holds to its budgets. CMD's status is timed's.
timed() {
  local stage=$1 t0=$SECONDS rc
  shift
  set +e
  (
    set -e
    "$@"
  )
  rc=$?
  set -e
  if [[ -n "${TANDEM_STAGE_TIMES:-}" ]]; then
    printf '%s\t%d\t%d\n' "$stage" $((SECONDS - t0)) "$rc" >>"$TANDEM_STAGE_TIMES"
  fi
  return "$rc"
}

install_deps() {  # install_deps [more packages]: PACKAGES and those, when missing
  local missing=()
  for p in "${PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  log "installing ${missing[*]}"
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  # Debian's postgresql-15 makes a "main" cluster at install and starts it on port 5432 (its
  # postinst runs pg_createcluster, then invoke-rc.d; in a container without systemd that may
  # fail, or leave a server running). The tests start their own servers on free ports, so none
  # is made: postgresql-common reads createcluster.d before it creates one.
  if [[ " ${missing[*]} " == *" postgresql-15 "* ]]; then
    $sudo mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = off" |
      $sudo tee /etc/postgresql-common/createcluster.d/tandem-tests.conf >/dev/null
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

sources() {
  git ls-files --cached --others --exclude-standard -- '*.h' '*.cc' 2>/dev/null ||
    find . -path ./build -prune -o \( -name '*.h' -o -name '*.cc' \) -print
}

check_format() { sources | xargs clang-format --dry-run --Werror; }

configure() {  # configure PRESET
  local preset=$1
  log "configuring ($preset)"
  local fresh=0
  [[ -f build/$preset/CMakeCache.txt ]] || fresh=1  # every preset's binaryDir is build/<preset>
  cmake --preset "$preset" >/dev/null
  # A fresh tree is configured twice. CMake 3.25's FindPkgConfig gives libzmq's
  # "-isystem /usr/include/mit-krb5" as an include directory on a tree's first configure and as a
  # compile flag on every later one, so the next configure changes the command line of everything
  # that uses ZeroMQ and ninja rebuilds it: in CI `slow` rebuilt 183 of the ci tree's 241 steps
  # (~380 s) that `test` had just built. The second configure is the state every later one keeps.
  if ((fresh)); then cmake --preset "$preset" >/dev/null; fi
}

build() {  # build PRESET [targets...]
  local preset=$1
  shift
  configure "$preset"
  log "building ($preset)"
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build --preset "$preset" -j "$JOBS" "${targets[@]}"
}

# The test binaries of the configured tree build/PRESET whose tests ctest may run there: each
# gtest binary (its discovery steps in build.ninja name it) with a discovery whose labels SKIP does
# not match, and each binary an add_test runs (the fuzz corpus runners). What they run (the
# supervisor, the runtimes, the tools) they depend on, so it is built with them; what none of them
# runs is not. (A binary that is not built has its tests replaced by one unlabelled <name>_NOT_BUILT
# that a label filter drops: a binary is left out only when its label says so. A binary discovered
# twice — a randomized suite's thorough run, label slow — is one POST_BUILD line with both.)
test_binaries() {  # test_binaries PRESET SKIP
  local dir=build/$1 skip=$2
  awk -v skip="LABELS;($skip)[;\"]" '{
      n = split($0, discovery, "TEST_TARGET=")
      for (i = 2; i <= n; i++) {
        name = discovery[i]
        sub(/ .*/, "", name)
        if (discovery[i] !~ skip && !(name in seen)) {
          seen[name] = 1
          print name
        }
      }
    }' "$dir/build.ninja"
  find "$dir" -name CTestTestfile.cmake -exec grep -h '^add_test(' {} + |
    grep -o '"[^"]*/bin/[^"/]*"' | sed 's|.*/bin/||; s|"$||'
}

cmd=${1:-}
case "$cmd" in
  test)
    timed "install" install_deps "${TEST_PACKAGES[@]}"
    timed "build ci" build ci
    # Node and tests/deploy's npm packages (label deploy). A registry that fails makes the test
    # that needs them fail, not the whole run.
    timed "install test tools" bash tools/install-test-tools.sh ||
      echo "warning: tools/install-test-tools.sh failed: Deploy.KubernetesManifests… will fail" >&2
    log "testing"
    timed "test ci" ctest --preset ci -j "$TEST_JOBS" --timeout 600 --label-exclude 'slow|bench'
    ;;
  slow)
    timed "install" install_deps
    timed "build ci (slow)" build ci
    log "testing (slow)"
    timed "test slow" ctest --preset ci -j "$TEST_JOBS" --timeout 900 --label-regex 'slow|bench'
    ;;
  asan)
    timed "install" install_deps
    # Only the binaries with tests the asan preset runs (not tandem-bench and the bench smoke, nor
    # the churn test, nor tandem-fuzz-make-corpus, which no test runs).
    timed "configure asan" configure asan
    mapfile -t targets < <(test_binaries asan 'slow|bench')
    timed "build asan" build asan "${targets[@]}"
    log "testing under ASan+UBSan (unit and integration tests)"
    timed "test asan" ctest --preset asan -j "$TEST_JOBS" --timeout 900
    ;;
  tsan)
    timed "install" install_deps
    timed "build tsan" build tsan
    log "testing under ThreadSanitizer (unit tests, the runtime's integration tests; suppressions: tests/tsan.supp)"
    timed "test tsan" ctest --preset tsan -j "$TEST_JOBS" --timeout 900
    ;;
  stress)
    install_deps
    build ci
    repeat=${2:-3}
    [[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "stress: N must be a positive count" >&2; exit 64; }
    log "two CPU burners beside the integration and adversarial tests, each run $repeat times"
    burners=()
    trap 'kill "${burners[@]}" 2>/dev/null' EXIT
    for _ in 1 2; do
      # Each burner ends with this script, however it ends (SIGKILL included).
      bash -c "while kill -0 $$ 2>/dev/null; do :; done" &
      burners+=($!)
    done
    ctest --preset ci -j "$TEST_JOBS" --timeout 900 --label-regex 'integration|adversarial' \
      --repeat "until-fail:$repeat"
    ;;
  format-check)
    timed "install" install_deps
    log "checking clang-format"
    timed "format-check" check_format
    ;;
  format)
    install_deps
    sources | xargs clang-format -i
    ;;
  bench)
    install_deps
    build ci tandem-shm-bench
    log "running tandem-shm-bench"
    build/ci/bin/tandem-shm-bench "${@:2}"
    ;;
  demo)
    install_deps
    build ci tandem-supervisor tandem-worker tandem-ctl tandem-shm tandem_python tandem-frontend
    log "running the demo"
    BUILD=build/ci bash tools/demo.sh
    BUILD=build/ci bash tools/demo_sql.sh
    ;;
  *)
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    [[ -z "$cmd" || "$cmd" == "-h" || "$cmd" == "--help" ]] && exit 0
    exit 64
    ;;
esac
