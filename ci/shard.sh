#!/bin/sh
# ci/shard.sh: one shard of a split run, or the merge of all of them, the same way on every
# engine (the GitHub Actions matrix in ci/github-shards.yml, the Slurm array in
# ci/slurm-shards.sbatch, a loop over hosts):
#
#   ci/shard.sh run K/N DIR check|bench [ARGS...]  softmax-lab check|bench ARGS --shard K/N,
#                                                  result in DIR/shard-K-of-N.json
#   ci/shard.sh merge DIR [--partial]              softmax-lab merge DIR/shard-*-of-*.json
#                                                  into DIR/merged.json and DIR/merged.md
#
# SML_CLI names the softmax-lab binary (default: softmax-lab on PATH, else ./build/softmax-lab).
# The exit status is softmax-lab's: a shard that finds a failure exits 1 (its result is still
# written, and the merge reports it); the merge exits 0, 1, 2 or 3 for the whole run.
set -eu
cli=${SML_CLI:-}
if [ -z "$cli" ]; then
    if command -v softmax-lab >/dev/null 2>&1; then cli=softmax-lab; else cli=./build/softmax-lab; fi
fi
usage() {
    echo "usage: $0 run K/N DIR check|bench [ARGS...] | $0 merge DIR [--partial]" >&2
    exit 2
}
[ $# -ge 2 ] || usage
case $1 in
run)
    [ $# -ge 4 ] || usage
    shard=$2 dir=$3 cmd=$4
    shift 4
    case $cmd in check | bench) ;; *) usage ;; esac
    k=${shard%/*} n=${shard#*/}
    mkdir -p "$dir"
    echo "$cli $cmd $* --shard $shard --json $dir/shard-$k-of-$n.json"
    exec "$cli" "$cmd" "$@" --shard "$shard" --json "$dir/shard-$k-of-$n.json"
    ;;
merge)
    dir=$2
    shift 2
    set -- "$dir"/shard-*-of-*.json "$@"
    echo "$cli merge $* --json $dir/merged.json --md $dir/merged.md"
    exec "$cli" merge "$@" --json "$dir/merged.json" --md "$dir/merged.md"
    ;;
*) usage ;;
esac
