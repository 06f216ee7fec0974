#!/usr/bin/env bash
# ci/nightly.sh: the nightly profile (check --long on every registered kernel, uncapped) as one
# run, or as N slices (--shard K/N) run one after another on this host and merged into the
# whole run's result: a slice fits a CI step's time limit, and the merged verdict is the whole
# profile's (softmax-lab merge; docs/SCALING.md). ci/gpu.sh's nightly stage runs it.
#
#   ci/nightly.sh BUILD DIR
#
#   SML_NIGHTLY_SHARDS=N      slices (default 1: one run)
#   SML_NIGHTLY_ONLY="K ..."  the slices to run now (default: all N); the merge waits for the
#                             others, which later calls with the same DIR run
#   SML_NIGHTLY_SEED=S        the seed (default: drawn once per DIR and kept in DIR/seed, so that
#                             every slice of the run draws from the same cases)
#   SML_NIGHTLY_SECONDS=S     cap each run (default 0: none; a capped run is INCOMPLETE)
#   SML_NIGHTLY_ARGS="..."    check's other arguments (default: --kernel all --op all --dtype all)
#
# DIR gets check.txt and check.json (one run), or slices/shard-K-of-N.json, slice-K.txt and
# slices/wall-K (seconds) per slice and, once every slice is there, merged.json, merged.md and
# merged.txt with the slices' walls added up. The exit status is check's or merge's (0 only
# when every planned case ran and held); while slices are missing, the worst of the slices run
# now, after a line naming the missing ones.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD DIR" >&2; exit 2; }
build=$1 dir=$2
here=$(cd "$(dirname "$0")" && pwd)
cli=$(cd "$build" 2>/dev/null && pwd)/softmax-lab
[ -x "$cli" ] || { echo "ci/nightly.sh: no softmax-lab in $build" >&2; exit 2; }
n=${SML_NIGHTLY_SHARDS:-1}
case $n in '' | *[!0-9]* | 0) echo "ci/nightly.sh: SML_NIGHTLY_SHARDS must be a count of at least 1, not '$n'" >&2; exit 2 ;; esac
read -r -a extra <<<"${SML_NIGHTLY_ARGS:---kernel all --op all --dtype all}"
args=("${extra[@]}" --long --seconds "${SML_NIGHTLY_SECONDS:-0}" --save "$dir/failures")
mkdir -p "$dir" || exit 2

if [ "$n" -eq 1 ]; then
    [ -n "${SML_NIGHTLY_SEED:-}" ] && args+=(--seed "$SML_NIGHTLY_SEED")
    t=$(date +%s)
    "$cli" check "${args[@]}" --json "$dir/check.json" 2>&1 | tee "$dir/check.txt"
    rc=${PIPESTATUS[0]}
    echo "nightly: one run, wall $(($(date +%s) - t)) s, exit $rc" | tee -a "$dir/check.txt"
    exit "$rc"
fi

# Slices: one seed for all of them, the given one or the one this DIR's first slice drew.
seed=${SML_NIGHTLY_SEED:-}
[ -z "$seed" ] && [ -s "$dir/seed" ] && seed=$(cat "$dir/seed")
[ -z "$seed" ] && seed=0x$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')
case $seed in '' | *[!0-9a-fA-Fx]*) echo "ci/nightly.sh: bad seed '$seed'" >&2; exit 2 ;; esac
echo "$seed" >"$dir/seed.tmp" && mv "$dir/seed.tmp" "$dir/seed" || exit 2
mkdir -p "$dir/slices" || exit 2
worst=0
for k in ${SML_NIGHTLY_ONLY:-$(seq 1 "$n")}; do
    case $k in '' | *[!0-9]*) echo "ci/nightly.sh: SML_NIGHTLY_ONLY holds '$k', not a slice number" >&2; exit 2 ;; esac
    if [ "$k" -lt 1 ] || [ "$k" -gt "$n" ]; then
        echo "ci/nightly.sh: slice $k is not one of 1..$n" >&2
        exit 2
    fi
    t=$(date +%s)
    SML_CLI=$cli sh "$here/shard.sh" run "$k/$n" "$dir/slices" check "${args[@]}" --seed "$seed" \
        2>&1 | tee "$dir/slice-$k.txt"
    rc=${PIPESTATUS[0]}
    wall=$(($(date +%s) - t))
    echo "$wall" >"$dir/slices/wall-$k"
    echo "nightly: slice $k/$n (seed $seed), wall $wall s, exit $rc" | tee -a "$dir/slice-$k.txt"
    # The gravest status: a failure (1) over everything, then an error (3), incomplete (4), flaky (5).
    case $rc in 1) worst=1 ;; 0) ;; *) [ "$worst" -eq 0 ] && worst=$rc ;; esac
done

missing=""
for k in $(seq 1 "$n"); do [ -s "$dir/slices/shard-$k-of-$n.json" ] || missing="$missing $k"; done
if [ -n "$missing" ]; then
    echo "nightly: not merged yet: slices$missing of $n still to run (same DIR); the whole" \
        "profile's verdict comes with them"
    exit "$worst"
fi
"$cli" merge "$dir"/slices/shard-*-of-"$n".json --json "$dir/merged.json" --md "$dir/merged.md" \
    2>&1 | tee "$dir/merged.txt"
rc=${PIPESTATUS[0]}
walls=$(for k in $(seq 1 "$n"); do cat "$dir/slices/wall-$k" 2>/dev/null || echo "?"; done | paste -sd+)
total=$(echo "$walls" | tr '+' '\n' | awk '$1 ~ /^[0-9]+$/ { s += $1 } END { print s + 0 }')
echo "nightly: $n slices one after another, wall $total s in all ($walls), merged exit $rc" |
    tee -a "$dir/merged.txt"
exit "$rc"
