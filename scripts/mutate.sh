#!/usr/bin/env bash
# Mutation check: does the test suite catch a wrong engine?
# Each line of scripts/mutations.tsv is a one-line bug of the kind real ones are (a sign, an
# off-by-one, a dropped term, a reset instead of an accumulation, a parameter replaced by its
# default). For each, in a scratch copy of the committed tree, the script applies the bug, rebuilds
# the tests named on that line, runs them and restores the file. It prints which test caught each
# mutation, and exits non-zero if any mutation survived all its tests.
#
#   scripts/mutate.sh [--only ID[,ID..]] [--keep] [--jobs N] [--list]
#
# --list only parses the table and prints each mutation's fields, one per line, building nothing.
#
# The scratch copy is a detached git worktree in ${ATTNLAB_MUTATE_DIR:-/tmp/attnlab-mutate}; its
# build is incremental, so after the first build each mutation recompiles one file and relinks its
# tests. A full run of the 36 mutations took 8 minutes with a warm compiler cache (README).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
table="$root/scripts/mutations.tsv"
scratch="${ATTNLAB_MUTATE_DIR:-/tmp/attnlab-mutate}"
only="" keep=0 list=0 jobs="$(nproc)"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --only) only=",$2,"; shift 2 ;;
    --keep) keep=1; shift ;;
    --jobs) jobs="$2"; shift 2 ;;
    --list) list=1; shift ;;
    *) echo "usage: $0 [--only ID[,ID..]] [--keep] [--jobs N] [--list]" >&2; exit 2 ;;
  esac
done

# The table's rows, one mutation per output line, its six fields separated by the unit
# separator (0x1f). `read` with IFS=tab cannot do this: tab is IFS whitespace, so two tabs in a row
# (an empty replacement, which deletes the original) would collapse and shift the later fields.
# A row without exactly six fields stops the run, naming its line.
fields=$'\x1f'
parse_table() {
  awk -F'\t' -v OFS="$fields" '
    /^#/ || /^[[:space:]]*$/ { next }
    NF != 6 { printf "%s:%d: %d tab-separated fields, expected 6 (id, file, original, replacement, tests, kind)\n", FILENAME, FNR, NF > "/dev/stderr"; bad = 1; next }
    $1 == "" || $2 == "" || $3 == "" || $5 == "" { printf "%s:%d: only the replacement may be empty\n", FILENAME, FNR > "/dev/stderr"; bad = 1; next }
    { $1 = $1; print }
    END { exit bad }' "$table"
}
rows="$(parse_table)" || { echo "fix $table before running" >&2; exit 2; }

if [[ $list == 1 ]]; then
  while IFS="$fields" read -r id file old new tests kind; do
    [[ -n "$only" && "$only" != *",$id,"* ]] && continue
    printf 'id: %s\nfile: %s\noriginal: %s\nreplacement: %s\ntests: %s\nkind: %s\n\n' \
      "$id" "$file" "$old" "${new:-(empty: the original is deleted)}" "$tests" "$kind"
  done <<<"$rows"
  exit 0
fi

if [[ ! -d "$scratch/.git" && ! -f "$scratch/.git" ]]; then
  rm -rf "$scratch"
  git -C "$root" worktree add --detach "$scratch" HEAD >/dev/null 2>&1
fi
git -C "$scratch" checkout --detach -q "$(git -C "$root" rev-parse HEAD)"
git -C "$scratch" checkout -q -- .
cleanup() { git -C "$scratch" checkout -q -- . 2>/dev/null || true; [[ $keep == 1 ]] || git -C "$root" worktree remove --force "$scratch"; }
trap cleanup EXIT

echo "== building the scratch copy ($scratch)"
"$scratch/scripts/build.sh" $(cut -d "$fields" -f5 <<<"$rows" | tr ',' '\n' | sort -u) >/tmp/attnlab-mutate-build.log 2>&1 ||
  { echo "the unmutated build failed: see /tmp/attnlab-mutate-build.log" >&2; exit 1; }

# Literal search and replace, which must match exactly once (\n in the table is a newline).
apply() {
  OLD="$2" NEW="$3" perl -0777 -i -pe '
    BEGIN { ($o, $n) = map { s/\\n/\n/gr } @ENV{qw(OLD NEW)}; }
    $c = () = /\Q$o\E/g; die "matches $c times\n" unless $c == 1; s/\Q$o\E/$n/;' "$1"
}

run_tests() {  # prints the first failing test, or nothing
  local dir="$1" tests="$2" t
  for t in ${tests//,/ }; do
    if ! (cd "$dir" && ctest -R "^${t}\$" --timeout 600 >/dev/null 2>&1); then echo "$t"; return; fi
  done
}

printf '| mutation | kind | file | caught by |\n| --- | --- | --- | --- |\n'
survived=0 total=0
while IFS="$fields" read -r id file old new tests kind; do
  [[ -n "$only" && "$only" != *",$id,"* ]] && continue
  total=$((total + 1))
  if ! apply "$scratch/$file" "$old" "$new" 2>/tmp/attnlab-mutate-apply.log; then
    echo "| $id | $kind | $file | NOT APPLIED: $(cat /tmp/attnlab-mutate-apply.log) |"
    survived=$((survived + 1)); continue
  fi
  caught=""
  # shellcheck disable=SC2086
  if ! cmake --build "$scratch/build" -j "$jobs" --target ${tests//,/ } >/tmp/attnlab-mutate-step.log 2>&1; then
    caught="the build (does not compile)"
  else
    caught="$(run_tests "$scratch/build" "$tests")"
  fi
  git -C "$scratch" checkout -q -- "$file"
  if [[ -z "$caught" ]]; then caught="NOT CAUGHT (ran: $tests)"; survived=$((survived + 1)); fi
  echo "| $id | $kind | \`$file\` | $caught |"
done <<<"$rows"

echo
echo "$((total - survived)) of $total mutations caught"
[[ $survived == 0 ]]
