#!/bin/bash
# pipeweave device check 3 (H200): fp8 GEMMs (torch._scaled_mm, per-tensor scales) and a repeat of the bf16 CUDA-graph timings
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
T0=$(date +%s)
log() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu --format=csv > $OUT/env_run3.txt 2>&1
python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name())" >> $OUT/env_run3.txt 2>&1
log fp8
timeout 150 python3 -m pipeweave.measure .devrun/plan_fp8.csv --out $OUT/measured_fp8_cuda_graph.csv --save-every 20 > $OUT/measure_fp8.log 2>&1; echo "rc=$?" >> $OUT/measure_fp8.log
tail -3 $OUT/measure_fp8.log; grep -c "not measured" $OUT/measure_fp8.log
log bf16 repeat
timeout 120 python3 -m pipeweave.measure .devrun/plan.csv --out $OUT/measured_cuda_graph_repeat.csv --save-every 20 > $OUT/measure_graph_repeat.log 2>&1; echo "rc=$?" >> $OUT/measure_graph_repeat.log
tail -2 $OUT/measure_graph_repeat.log
log done
