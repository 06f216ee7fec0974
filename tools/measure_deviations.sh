#!/usr/bin/env bash
# measure_deviations.sh: on a GPU machine, from the repository root, what each kernel that
# declares a deviation from the numerics contract does outside it, measured, to set or confirm
# its declaration (cuDNN: src/registry/registry.c; torch, liger: python/softmax_lab/backends/;
# docs/PROPERTIES.md, "Declared deviations"). Each stage runs under its own time limit:
#
#   props   softmax-lab check on the declared kernels (GPU profile, or CASES per op and
#           dtype): per run the outcome, the checks outside the contract its declaration
#           excused and the largest error excused (ulps of the dtype, x the contract's bound);
#           a FAIL line names the element its declaration does not cover
#   edge    softmax-lab-edge-shapes on cuDNN: "WITHIN DECLARED DEVIATION" per dtype with the
#           largest excused error, or FAIL
#   bench   softmax-lab bench on the standard sweep: per case ok, KNOWN-DEV (within the
#           declaration) or WRONG (beyond it, naming it)
#   strict  check --strict on cuDNN (a few cases): must FAIL (the contract itself)
#
# The framework backends join the props and bench stages where `python3 -m softmax_lab` can
# import PyTorch (and Liger). Usage:
#
#   tools/measure_deviations.sh [BUILD_DIR]            (default build; STAGES, CASES, OUT)
#
# PROPS_KERNELS (default "cudnn frameworks") picks which of the two the props stage runs.
#
# Logs and JSON land in $OUT (default ./out/deviations); a table of the runs last.
set -uo pipefail
B=${1:-build}
OUT=${OUT:-out/deviations}
STAGES=${STAGES:-props edge bench strict}
mkdir -p "$OUT"
cli=$B/softmax-lab
[ -x "$cli" ] || { echo "measure_deviations.sh: no $cli (build first)" >&2; exit 2; }
has() { [[ " $STAGES " == *" $1 "* ]]; }
cases=()
[ -n "${CASES:-}" ] && cases=(--cases "$CASES")
export PYTHONPATH=python${PYTHONPATH:+:$PYTHONPATH} SML_LIBRARY_DIR=$B/lib
fw=""
if python3 -c 'import torch, softmax_lab; assert torch.cuda.is_available()' 2>/dev/null; then
  fw=$(python3 -m softmax_lab list 2>/dev/null | awk '$1 == "torch" || $1 == "liger" {print $1}' | paste -sd, -)
fi
echo "declared kernels: cudnn${fw:+, $fw} (framework backends need PyTorch: ${fw:-not importable here})"
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tee "$OUT/gpu.txt"

props_on() { [[ " ${PROPS_KERNELS:-cudnn frameworks} " == *" $1 "* ]]; }
if has props && props_on cudnn; then
  timeout "${PROPS_LIMIT:-600}" "$cli" check --kernel cudnn "${cases[@]}" --json "$OUT/check-cudnn.json" \
    >"$OUT/check-cudnn.log" 2>&1
  echo "== props cudnn: exit $?"
  grep -E "^cudnn |declared deviation|^FAIL|^  first:|^check:" "$OUT/check-cudnn.log" | head -40
fi
if has props && props_on frameworks; then
  if [ -n "$fw" ]; then
    timeout "${PROPS_LIMIT:-600}" python3 -m softmax_lab check --kernel "$fw" "${cases[@]}" \
      --json "$OUT/check-frameworks.json" >"$OUT/check-frameworks.log" 2>&1
    echo "== props $fw: exit $?"
    grep -E "^(torch|liger) |declared deviation|^FAIL|^  first:|^check:" "$OUT/check-frameworks.log" | head -40
  fi
fi
if has edge; then
  timeout "${EDGE_LIMIT:-600}" "$B/softmax-lab-edge-shapes" --kernel cudnn >"$OUT/edge-cudnn.log" 2>&1
  echo "== edge cudnn: exit $?"
  grep -E "^WITHIN DECLARED DEVIATION [^:]*: cudnn: [0-9]+ cases|^FAIL|passed, .* failed" "$OUT/edge-cudnn.log" | head -20
fi
if has bench; then
  timeout "${BENCH_LIMIT:-600}" "$cli" bench --backend cudnn --sweep standard --op all \
    --json "$OUT/bench-cudnn.json" --ledger "$OUT/ledger" >"$OUT/bench-cudnn.log" 2>&1
  echo "== bench cudnn: exit $?"
  if [ -n "$fw" ]; then
    timeout "${BENCH_LIMIT:-600}" python3 -m softmax_lab bench --backend "$fw" --sweep standard \
      --op softmax_bwd --json "$OUT/bench-frameworks.json" --ledger "$OUT/ledger" \
      >"$OUT/bench-frameworks.log" 2>&1
    echo "== bench $fw: exit $?"
  fi
fi
if has strict; then
  timeout 300 "$cli" check --kernel cudnn --dtype fp16 --op softmax --cases 2000 --strict \
    >"$OUT/strict-cudnn.log" 2>&1
  rc=$?
  echo "== strict cudnn: exit $rc (1 expected: cuDNN misses the contract itself)"
fi

# The table: per run of the property suite, and per (kernel, op, dtype) of the bench.
python3 - "$OUT" <<'EOF'
import glob, json, os, sys
out = sys.argv[1]
print("\n%-8s %-16s %-5s %-8s %8s %9s %12s %12s  %s" % ("kernel", "op", "dtype", "outcome", "cases",
      "excused", "largest ulp", "largest xB", "declared"))
for path in sorted(glob.glob(os.path.join(out, "check-*.json"))):
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        print("%s: unreadable (%s)" % (path, e))
        continue
    for r in doc.get("runs", []):
        print("%-8s %-16s %-5s %-8s %8s %9s %12.4g %12.4g  %s" % (
            r["kernel"], r["op"], r["dtype"], r["outcome"], r.get("cases"), r.get("excused"),
            float(r.get("excused_worst_ulps") or 0), float(r.get("excused_worst_ratio") or 0),
            r.get("declared_deviation") or "-"))
rows = {}
for path in sorted(glob.glob(os.path.join(out, "bench-*.json"))):
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        continue
    for rec in doc.get("records", []):
        if rec.get("kernel") not in ("cudnn", "torch", "liger"):
            continue
        for e in rec.get("evidence", []):
            k = (rec["kernel"], e["op"], e["dtype"])
            worst = rows.setdefault(k, [0, set(), 0.0])
            worst[0] += 1
            worst[1].add(e.get("check"))
            try:
                worst[2] = max(worst[2], float(e.get("worst_ulps") or 0))
            except ValueError:
                worst[2] = float("inf")
if rows:
    print("\nbench (standard sweep): kernel op dtype: cases, verdicts, worst ulp at the worst element")
    for (k, op, dt), (n, checks, ulps) in sorted(rows.items()):
        print("  %-8s %-16s %-5s %3d  %-22s %.4g" % (k, op, dt, n, ",".join(sorted(checks)), ulps))
EOF
