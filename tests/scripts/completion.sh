#!/usr/bin/env bash
# Completion scripts are generated from the CLI definition and are valid shell.
set -eu
oomdx="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$oomdx" completion bash > "$tmp/oomdx.bash"
bash -n "$tmp/oomdx.bash"
grep -q "complete -o filenames -F _oomdx oomdx" "$tmp/oomdx.bash"
grep -q -- "--snapshot" "$tmp/oomdx.bash"
grep -q '"rules") words="lint test list' "$tmp/oomdx.bash"
# the bash function completes subcommands of "rules"
out=$(bash -c "source '$tmp/oomdx.bash'; COMP_WORDS=(oomdx rules l); COMP_CWORD=2; _oomdx; echo \${COMPREPLY[*]}")
[ "$out" = "lint list" ] || { echo "bash completion gave '$out'"; exit 1; }
"$oomdx" completion zsh > "$tmp/_oomdx"
grep -q "#compdef oomdx" "$tmp/_oomdx"
if command -v zsh >/dev/null; then zsh -n "$tmp/_oomdx"; fi
echo "completion scripts ok"
