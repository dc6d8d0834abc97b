#!/bin/bash
# pipeweave device check (H200): measure helper, Kineto trace, Triton autotune caches + the live hook, ncu CSV
set -u
export PYTHONUNBUFFERED=1
T0=$(date +%s)
C=/tmp/cap
mkdir -p $C
log() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
pack() { tar czf $OUT/captures.tar.gz -C /tmp cap; }
{ nvidia-smi; python3 -c "import torch,triton,pandas,numpy,sklearn,scipy,pyarrow;print('torch',torch.__version__,'triton',triton.__version__,'pandas',pandas.__version__,'numpy',numpy.__version__,'sklearn',sklearn.__version__,'scipy',scipy.__version__,'pyarrow',pyarrow.__version__,torch.cuda.get_device_name())"; which ncu; ncu --version; } > $C/env.txt 2>&1
cat $C/env.txt | tail -8
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .devrun/*.whl > $C/pip.txt 2>&1
export PYTHONPATH=$PWD:/tmp/site
log measure
timeout 170 python3 -m pipeweave.measure .devrun/plan.csv --out $OUT/measured.csv --save-every 20 > $C/measure.log 2>&1; echo "rc=$?" >> $C/measure.log
tail -5 $C/measure.log; pack
log capture
TRITON_CACHE_DIR=/tmp/tcache timeout 220 python3 .devrun/capture.py $C > $C/capture.log 2>&1; echo "rc=$?" >> $C/capture.log
tail -20 $C/capture.log; pack
log ncu
M=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic
timeout 80 ncu --csv --page raw --clock-control none --metrics $M,device__attribute_display_name python3 .devrun/ncu_target.py > $C/ncu_raw.csv 2> $C/ncu.err; echo "rc=$?" >> $C/ncu.err
if ! grep -q '"ID"' $C/ncu_raw.csv; then
  log ncu retry without display name
  timeout 60 ncu --csv --page raw --clock-control none --metrics $M python3 .devrun/ncu_target.py > $C/ncu_raw.csv 2>> $C/ncu.err; echo "rc=$?" >> $C/ncu.err
fi
tail -3 $C/ncu.err; head -c 1500 $C/ncu_raw.csv; echo; pack
log done
ls -la $OUT $C
