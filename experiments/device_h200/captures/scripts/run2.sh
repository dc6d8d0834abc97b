#!/bin/bash
# pipeweave device check 2 (H200): CUDA-graph timing of the measure helper vs do_bench (repeat), a wider Triton tile sweep
set -u
export PYTHONUNBUFFERED=1
T0=$(date +%s)
C=/tmp/cap2
mkdir -p $C
log() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
pack() { tar czf $OUT/captures2.tar.gz -C /tmp cap2; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $C/env.txt 2>&1
export PYTHONPATH=$PWD
log measure cuda_graph
timeout 150 python3 -m pipeweave.measure .devrun/plan.csv --out $OUT/measured_graph.csv --save-every 20 > $C/measure_graph.log 2>&1; echo "rc=$?" >> $C/measure_graph.log
tail -4 $C/measure_graph.log; grep -c "not measured" $C/measure_graph.log; pack
log measure do_bench repeat
timeout 100 python3 -m pipeweave.measure .devrun/plan.csv --timing do_bench --out $OUT/measured_dobench2.csv --save-every 20 > $C/measure_dobench2.log 2>&1; echo "rc=$?" >> $C/measure_dobench2.log
tail -3 $C/measure_dobench2.log; pack
log autotune sweep 2
TRITON_CACHE_DIR=/tmp/tcache2 timeout 200 python3 .devrun/capture.py $C autotune_all2 > $C/capture2.log 2>&1; echo "rc=$?" >> $C/capture2.log
tail -6 $C/capture2.log; pack
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> $C/env.txt 2>&1
log done
ls $C | wc -l
