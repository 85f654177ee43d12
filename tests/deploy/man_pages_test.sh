#!/usr/bin/env bash
# Deploy.ManPagesAreGeneratedAndLintClean (issue 18, acceptance 1): the build made a man page for
# each of tandem-supervisor, tandem-ctl, tandem-shm and tandem-bench (help2man, from --help: see
# cmake/packaging.cmake); each names its program, documents every option its --help lists, and
# passes `mandoc -T lint` at warning level and groff's warnings (-ww, but for lines too long to
# justify). The one mandoc warning allowed: help2man writes the date as "Month Year", which mandoc
# cannot parse (it prints it verbatim).
#
#   tests/deploy/man_pages_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
status=0
for prog in tandem-supervisor tandem-ctl tandem-shm tandem-bench; do
  page=$build/man/$prog.1
  if [[ ! -s $page ]]; then
    echo "FAIL: no man page $page (is help2man installed? cmake/packaging.cmake)" >&2
    status=1
    continue
  fi
  lint=$(mandoc -T lint -W warning "$page" 2>&1 | grep -v 'cannot parse date, using it verbatim' || true)
  if [[ -n $lint ]]; then
    echo "FAIL: mandoc -T lint $prog.1:" >&2
    echo "$lint" >&2
    status=1
  fi
  groff_out=$(groff -man -ww -Wbreak -z "$page" 2>&1 || true)  # -Wbreak: a long word cannot be justified
  if [[ -n $groff_out ]]; then
    echo "FAIL: groff -ww $prog.1:" >&2
    echo "$groff_out" >&2
    status=1
  fi
  text=$(MANWIDTH=200 man -l "$page" 2>/dev/null || groff -man -Tutf8 "$page")
  [[ $text == *"$prog"* ]] || { echo "FAIL: $prog.1 does not name $prog" >&2; status=1; }
  # Every long option --help lists is on the page.
  for opt in $("$build/bin/$prog" --help 2>&1 | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
    if ! grep -qF -- "${opt//-/\\-}" "$page" && ! grep -qF -- "$opt" "$page"; then
      echo "FAIL: $prog.1 lacks $opt" >&2
      status=1
    fi
  done
  echo "ok: $prog.1"
done
exit $status
