#!/usr/bin/env bash
# run_patch_mutants.sh: the patch mutants of tests/mutants/patch_mutants.txt (docs/MUTANTS.md,
# "Patch mutants"): one-line bugs planted by sed in a production kernel, on a copy of the source
# tree, for code paths the zoo's copies of the simple kernels do not have.
#
#   tests/mutants/run_patch_mutants.sh WORK ARTIFACTS [cmake args...]   build, run, judge (GPU)
#   tests/mutants/run_patch_mutants.sh --check                          every patch still applies
#
# WORK receives the copy (WORK/src) and its build (WORK/build; reused, so a mutant recompiles
# only its file). For each mutant: the pristine file is restored, the substitution applied and
# required to change exactly one line, the killer's target rebuilt, and the killer run in the
# build tree. Its control is the same killer on the unpatched build, run first: it must pass,
# or no kill counts. SML_PATCH_MUTANTS="a b" runs only those; SML_PATCH_TIMEOUT (seconds per
# killer, default 300) turns a hang into a kill marked "timeout".
#
# Output: one line per mutant on stdout and in ARTIFACTS/patch_mutants.txt, logs in
# ARTIFACTS/patch_mutants/. Exit 0: every mutant killed; 1: a survivor, a patch that no longer
# applies, a failing control or a build error; 77: no GPU (the control skipped); 2: bad usage.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
LIST="$SRC/tests/mutants/patch_mutants.txt"
field() { awk -F' [|] ' -v n="$2" '{ print $n }' <<<"$1"; }
entries() { grep -v '^[[:space:]]*\(#\|$\)' "$LIST"; }
wanted() { [ -z "${SML_PATCH_MUTANTS:-}" ] || [[ " $SML_PATCH_MUTANTS " == *" $1 "* ]]; }

# Apply entry $1 to the pristine file $2 into $3; print the number of changed lines.
apply() {
  sed -E "$(field "$1" 3)" "$2" >"$3" || return 1
  diff "$2" "$3" | grep -c '^>'
}

if [ "${1:-}" = --check ]; then
  bad=0; n=0
  while IFS= read -r e; do
    name=$(field "$e" 1); file=$(field "$e" 2); n=$((n + 1))
    tmp=$(mktemp)
    changed=$(apply "$e" "$SRC/$file" "$tmp")
    rm -f "$tmp"
    if [ "$changed" != 1 ]; then
      echo "FAIL run_patch_mutants --check: $name changes ${changed:-no} lines of $file, not 1: the code moved; update its substitution in tests/mutants/patch_mutants.txt"
      echo "  reproduce: tests/mutants/run_patch_mutants.sh --check"
      bad=1
    fi
  done < <(entries)
  echo "run_patch_mutants --check: $n patch mutants, $([ $bad = 0 ] && echo "each changes one line" || echo "some do not apply")"
  exit $bad
fi

[ $# -ge 2 ] || { sed -n '6,7p' "$0" | sed 's/^# */usage: /' >&2; exit 2; }
WORK=$1 ART=$2; shift 2
mkdir -p "$WORK" "$ART/patch_mutants" || exit 2
WORK=$(cd "$WORK" && pwd) ART=$(cd "$ART" && pwd)
LOGS="$ART/patch_mutants" TABLE="$ART/patch_mutants.txt"
: >"$TABLE"
say() { echo "$*" | tee -a "$TABLE"; }
if [[ " $* " != *"CMAKE_CUDA_ARCHITECTURES"* ]]; then set -- "$@" -DCMAKE_CUDA_ARCHITECTURES=native; fi

rm -rf "$WORK/src" && mkdir -p "$WORK/src"
for d in CMakeLists.txt cmake include src kernels reference cli tests; do cp -r "$SRC/$d" "$WORK/src/"; done
t=$(date +%s)
if ! cmake -S "$WORK/src" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release "$@" >"$LOGS/configure.log" 2>&1; then
  say "FAIL run_patch_mutants: configure failed (log $LOGS/configure.log)"; exit 1
fi
targets=$(entries | while IFS= read -r e; do basename "$(field "$e" 4 | cut -d' ' -f1)"; done | sort -u)
build() { cmake --build "$WORK/build" -j "$(nproc)" --target $targets >>"$LOGS/build.log" 2>&1; }
if ! build; then say "FAIL run_patch_mutants: the unpatched build failed (log $LOGS/build.log)"; exit 1; fi
echo "run_patch_mutants: copy built in $(( $(date +%s) - t )) s ($targets)"

TO=${SML_PATCH_TIMEOUT:-300}
run_killer() { (cd "$WORK/build" && timeout "$TO" $1) >"$2" 2>&1; }

# Controls: each distinct killer on the unpatched build must pass.
declare -A control
while IFS= read -r e; do
  name=$(field "$e" 1); wanted "$name" || continue
  k=$(field "$e" 4); [ -n "${control[$k]:-}" ] && continue
  t=$(date +%s); run_killer "$k" "$LOGS/control.$name.log"; rc=$?
  control[$k]=$rc
  echo "run_patch_mutants: control '$k': exit $rc in $(( $(date +%s) - t )) s: $(tail -1 "$LOGS/control.$name.log")"
  if [ $rc = 77 ]; then say "SKIP run_patch_mutants: no GPU (the control exits 77)"; exit 77; fi
done < <(entries)

status=0 killed=0 total=0
while IFS= read -r e; do
  name=$(field "$e" 1); wanted "$name" || continue
  file=$(field "$e" 2); k=$(field "$e" 4); total=$((total + 1))
  repro="SML_PATCH_MUTANTS=$name tests/mutants/run_patch_mutants.sh $WORK $ART"
  cp "$SRC/$file" "$WORK/src/$file"
  changed=$(apply "$e" "$SRC/$file" "$WORK/src/$file")
  diff "$SRC/$file" "$WORK/src/$file" >"$LOGS/$name.diff"
  if [ "$changed" != 1 ]; then
    say "FAIL $name: the substitution changes ${changed:-no} lines of $file, not 1 (update tests/mutants/patch_mutants.txt)"
    status=1; cp "$SRC/$file" "$WORK/src/$file"; continue
  fi
  t=$(date +%s)
  if ! build; then
    say "ERROR $name: the patched build failed (log $LOGS/build.log)"; status=1
    cp "$SRC/$file" "$WORK/src/$file"; continue
  fi
  b=$(( $(date +%s) - t )); t=$(date +%s)
  run_killer "$k" "$LOGS/$name.log"; rc=$?
  s=$(( $(date +%s) - t ))
  cp "$SRC/$file" "$WORK/src/$file"
  if [ "${control[$k]}" != 0 ]; then
    say "NOT COUNTED $name: its control '$k' fails unpatched (exit ${control[$k]})"; status=1
  elif [ $rc = 0 ]; then
    say "SURVIVED $name: '$k' passes with the bug ($(tail -1 "$LOGS/$name.log")); rebuilt in $b s, ran $s s"
    say "  reproduce: $repro"; status=1
  else
    how="exit $rc"; [ $rc = 124 ] && how="timeout after $TO s"; [ $rc -gt 128 ] && [ $rc != 124 ] && how="signal $((rc - 128))"
    first=$(grep -m1 '^FAIL' "$LOGS/$name.log" | cut -c1-240)
    say "KILLED $name: '$k' fails ($how, $(tail -1 "$LOGS/$name.log")); rebuilt in $b s, ran $s s"
    [ -n "$first" ] && say "  first failure: $first"
    killed=$((killed + 1))
  fi
done < <(entries)
# The copy is left pristine, so WORK/build can be reused.
build || true
say "run_patch_mutants: $killed of $total killed"
exit $status
