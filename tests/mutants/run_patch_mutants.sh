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
# required to change exactly one line, the killer's target rebuilt, and the killer run as ctest
# runs it (from the copy's source tree, docs/ included). Its control is the same killer on the
# unpatched build, run first: it must pass, or no kill counts. A kill is the killer exiting 1
# with a FAIL line, or running past SML_PATCH_TIMEOUT (seconds per killer, default 300; a hang,
# marked "timeout"); a crash, a skip (77) or any other exit is an error, never a kill. The
# killers run with SML_SEED fixed (default below), so the control and every mutant see the same
# inputs and a rerun repeats them.
# SML_PATCH_MUTANTS="a b" runs only those (a name not in the list is an error).
#
# Output: one line per mutant on stdout and in ARTIFACTS/patch_mutants.txt, logs in
# ARTIFACTS/patch_mutants/. Exit 0: every mutant run was killed (and at least one ran); 1: a
# survivor, a patch that no longer applies, a failing control, a build error, a crash, none run;
# 77: no GPU (the control skipped); 2: bad usage.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
LIST="$SRC/tests/mutants/patch_mutants.txt"
field() { awk -F' [|] ' -v n="$2" '{ print $n }' <<<"$1"; }
nfields() { awk -F' [|] ' '{ k = 0; for (i = 1; i <= NF; i++) if ($i ~ /[^ ]/) k++; print (NF == 5 && k == 5) ? 5 : NF }' <<<"$1"; }
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
    if [ "$(nfields "$e")" != 5 ]; then
      echo "FAIL run_patch_mutants --check: line '$name' needs 5 non-empty fields separated by ' | ' (name, file, substitution, killer, bug)"
      bad=1; continue
    fi
    tmp=$(mktemp)
    changed=$(apply "$e" "$SRC/$file" "$tmp")
    rm -f "$tmp"
    if [ "$changed" != 1 ]; then
      echo "FAIL run_patch_mutants --check: $name changes ${changed:-no} lines of $file, not 1: the code moved; update its substitution in tests/mutants/patch_mutants.txt"
      echo "  reproduce: tests/mutants/run_patch_mutants.sh --check"
      bad=1
    fi
  done < <(entries)
  [ $n -gt 0 ] || { echo "FAIL run_patch_mutants --check: no patch mutants in $LIST"; bad=1; }
  echo "run_patch_mutants --check: $n patch mutants, $([ $bad = 0 ] && echo "each changes one line" || echo "not all apply")"
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
for d in CMakeLists.txt cmake include src kernels reference cli tests docs; do cp -r "$SRC/$d" "$WORK/src/"; done
t=$(date +%s)
if ! cmake -S "$WORK/src" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release "$@" >"$LOGS/configure.log" 2>&1; then
  say "FAIL run_patch_mutants: configure failed (log $LOGS/configure.log)"; exit 1
fi
targets=$(entries | while IFS= read -r e; do basename "$(field "$e" 4 | cut -d' ' -f1)"; done | sort -u)
build() { cmake --build "$WORK/build" -j "$(nproc)" --target $targets >>"$LOGS/build.log" 2>&1; }
if ! build; then say "FAIL run_patch_mutants: the unpatched build failed (log $LOGS/build.log)"; exit 1; fi
echo "run_patch_mutants: copy built in $(( $(date +%s) - t )) s ($targets)"

TO=${SML_PATCH_TIMEOUT:-300}
export SML_SEED=${SML_SEED:-0x5eed9a7c4e5eed01}
echo "run_patch_mutants: killers run with SML_SEED=$SML_SEED"
# A killer runs as ctest runs it: from the source tree (the copy), its program from the build.
run_killer() {
  local w
  read -r -a w <<<"$1"
  (cd "$WORK/src" && timeout "$TO" "$WORK/build/${w[0]}" "${w[@]:1}") >"$2" 2>&1
}

# The names first, then the lookups: `grep -q` at the end of the pipe would exit at its match
# and kill the writer with SIGPIPE, which pipefail reports as no match.
names=$(entries | while IFS= read -r e; do field "$e" 1; done)
for want in ${SML_PATCH_MUTANTS:-}; do
  grep -qx -- "$want" <<<"$names" ||
    { say "FAIL run_patch_mutants: SML_PATCH_MUTANTS names '$want', which is not in $LIST"; exit 1; }
done

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
  repro="SML_SEED=$SML_SEED SML_PATCH_MUTANTS=$name tests/mutants/run_patch_mutants.sh $WORK $ART"
  if [ "${control[$k]}" != 0 ]; then
    say "NOT COUNTED $name: its control '$k' fails unpatched (exit ${control[$k]}, log $LOGS/control.*.log)"
    status=1; continue
  fi
  changed=$(apply "$e" "$SRC/$file" "$WORK/src/$file") # written from the pristine file
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
  first=$(grep -m1 '^FAIL' "$LOGS/$name.log" | cut -c1-240)
  last=$(tail -1 "$LOGS/$name.log")
  if [ $rc = 0 ]; then
    say "SURVIVED $name: '$k' passes with the bug ($last); rebuilt in $b s, ran $s s"
    say "  reproduce: $repro"; status=1
  elif [ $rc = 1 ] && [ -n "$first" ]; then
    say "KILLED $name: '$k' fails ($last); rebuilt in $b s, ran $s s"
    say "  first failure: $first"
    killed=$((killed + 1))
  elif [ $rc = 124 ]; then
    say "KILLED $name: '$k' ran past $TO s (timeout: the bug hangs it); rebuilt in $b s"
    killed=$((killed + 1))
  else
    how="exit $rc"; [ $rc = 77 ] && how="exit 77, skipped"; [ $rc -gt 128 ] && how="signal $((rc - 128))"
    say "ERROR $name: '$k' neither passed nor failed a check ($how; log $LOGS/$name.log): not a kill"
    say "  reproduce: $repro"; status=1
  fi
done < <(entries)
# The copy is left pristine, so WORK/build can be reused.
build || true
say "run_patch_mutants: $killed of $total killed"
[ $total -gt 0 ] || { say "FAIL run_patch_mutants: no mutant ran"; status=1; }
exit $status
