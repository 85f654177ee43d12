# bash completion for tandem-supervisor, tandem-ctl, tandem-shm and tandem-bench (installed once
# per program name under share/bash-completion/completions/). The options and subcommands are read
# from the program's own --help, so they never drift from it: `tandem-ctl <TAB>` offers the
# commands, `tandem-ctl peek --<TAB>` that command's options, `--<TAB>` the global ones.
_tandem_complete() {
  local prog=$1 cur=${COMP_WORDS[COMP_CWORD]} help sub="" i
  # The first word after the program that is not an option is a subcommand (tandem-ctl, tandem-shm;
  # tandem-bench calls its subcommands scenarios).
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} != -* ]]; then
      sub=${COMP_WORDS[i]}
      break
    fi
  done
  if [[ -n $sub ]]; then
    help=$("$prog" "$sub" --help 2>&1)
  else
    help=$("$prog" --help 2>&1)
  fi
  if [[ $cur == -* || -z $sub && $prog == tandem-supervisor ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(grep -o -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u)" -- "$cur")
    return
  fi
  if [[ -z $sub ]]; then
    # Subcommands, under a "Subcommands:" (or "Scenarios"/"Commands") heading: names alone at the
    # start of a line (tandem-ctl), else the first word of each indented line (tandem-shm).
    local words
    words=$(awk '/^(Subcommands|Scenarios|Commands)/ {on = 1; next}
                 on && /^[A-Z][A-Za-z ]*:$/ {on = 0}
                 on && /^[a-z][a-z0-9-]*$/ {top = top " " $1; next}
                 on && /^  [a-z][a-z0-9-]* / {ind = ind " " $1}
                 END {print (top != "" ? top : ind)}' <<<"$help")
    mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
    return
  fi
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}
complete -F _tandem_complete tandem-supervisor tandem-ctl tandem-shm tandem-bench
