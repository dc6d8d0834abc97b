#!/bin/bash
# pipeweave device check 4 (H200): fp8 GEMM with the activation's quantization (static / dynamic per-tensor scale)
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
timeout 200 python3 .devrun/fp8_variants.py .devrun/plan_fp8.csv $OUT/measured_fp8_quant_variants.csv > $OUT/fp8_variants.log 2>&1; echo "rc=$?" >> $OUT/fp8_variants.log
tail -4 $OUT/fp8_variants.log
