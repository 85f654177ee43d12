#!/usr/bin/env bash
# What the deploy tests (tests/deploy, label "deploy") need beyond tools/run.sh's apt packages:
# Node.js with npm, and the npm packages of tests/deploy/package-lock.json (kubernetes-models,
# yaml) in tests/deploy/node_modules (gitignored). Idempotent, and quick when all is there.
#
# Why npm: the offline Kubernetes validation needs the API's OpenAPI schemas in a validator;
# Debian 12 packages none (no kubernetes-models, no kubeconform/kubeval), while the npm package
# kubernetes-models ships them compiled, pinned by the lock file. Node itself comes from Debian
# (nodejs, npm) when `node` is missing; a node already installed (another distribution of it,
# whose own npm may conflict with Debian's npm package) is used as it is.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "==> installing nodejs npm (apt)"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nodejs npm
fi

# npm ci only when the installed tree is not the locked one (npm writes its own copy of the lock).
lock=tests/deploy/package-lock.json
installed=tests/deploy/node_modules/.package-lock.json
if [[ ! -f $installed ]] || ! node -e '
    const [a, b] = process.argv.slice(1).map((f) => JSON.parse(require("fs").readFileSync(f)).packages);
    for (const k of Object.keys(a)) if (k && (!b[k] || b[k].version !== a[k].version)) process.exit(1);
  ' "$lock" "$installed"; then
  echo "==> npm ci --prefix tests/deploy"
  npm ci --prefix tests/deploy --no-audit --no-fund --loglevel=error \
    --fetch-timeout=60000 --fetch-retries=2
fi
