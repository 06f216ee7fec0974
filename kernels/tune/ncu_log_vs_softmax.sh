#!/bin/bash
# ncu_log_vs_softmax.sh: one GPU-machine call (session 18, run 157): why fp32 log_softmax at
# 128 x 2^20 forward runs 1-2 points under softmax on the same split plan (ledgers 152 and 156:
# 89.2 and 89.4% of memcpy against 91.0 and 91.x). ncu (--clock-control none, caches flushed
# before each launch) counts DRAM bytes, L2 read hits and instructions of the first launches of
# each op, alternating, in test_gpu_kernels on that one shape. Logs in $OUT.
export PATH=/usr/local/cuda/bin:$PATH; OUT=${OUT:-out}; mkdir -p "$OUT"; B=build-gpu
(cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null &&
  cmake --build $B -j"$(nproc)" --target test_gpu_kernels >"$OUT/build.log" 2>&1) || { tail -30 "$OUT/build.log"; exit 1; }
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sector_op_read_hit_rate.pct
M=$M,lts__t_sectors_op_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,smsp__inst_executed.sum
M=$M,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio
for i in 1 2; do for op in softmax log_softmax; do
  timeout 120 ncu --clock-control none --metrics $M -k regex:sml_split_kernel -c 3 --csv \
    ./$B/tests/unit/test_gpu_kernels --kernel split --op $op --dtype fp32 --rows 128 --cols 1048576 \
    > "$OUT/ncu-$op-$i.csv" 2> "$OUT/ncu-$op-$i.err"
  echo "$op $i exit $?"
done; done
for f in "$OUT"/ncu-*.csv; do echo "== $f"; grep -E '^"[0-9]' "$f" | awk -F'","' '{print $1"|"$(NF-2)"|"$NF}' | sed 's/"//g' | cut -c1-120; done | head -120
