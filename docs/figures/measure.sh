#!/usr/bin/env bash
# Measures this machine's GPU with the calibration programs and redraws the figures:
#   docs/data/*.csv and docs/data/measured-on.txt, then docs/figures/*.svg (docs/figures/plot.py).
# Usage: docs/figures/measure.sh [build-dir]   (run by: cmake --build --preset figures)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
data=$top/docs/data
mkdir -p "$data"
for program in calibrate_measuring calibrate_coalescing calibrate_execution_config calibrate_instructions calibrate_l2_persistence calibrate_transpose calibrate_matmul calibrate_pipeline calibrate_transfers calibrate_zero_copy; do
  [ -x "$build/$program" ] || { echo "missing $build/$program: build with the solutions first" >&2; exit 1; }
done
rm -f "$data"/*.measured-on.txt  # every chapter measured now, on this GPU
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)
echo "$gpu, driver $(echo "$gpu" | cut -d, -f2 | tr -d ' '), CUDA $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $(date +%Y-%m-%d)" |
  sed 's/, [0-9.]*, driver/, driver/' >"$data/measured-on.txt"
"$build/calibrate_measuring" --csv "$data/01-measuring.csv"
"$build/calibrate_coalescing" --csv "$data/04-coalescing.csv"
"$build/calibrate_execution_config" --csv "$data/08-execution-config.csv"
"$build/calibrate_instructions" --csv "$data/09-instructions.csv"
"$build/calibrate_l2_persistence" --csv "$data/10-l2-persistence.csv"
"$build/calibrate_transpose" --csv "$data/06-transpose.csv"
"$build/calibrate_matmul" --csv "$data/05-matmul.csv"
"$build/calibrate_pipeline" --csv "$data/07-async-pipeline.csv"
"$build/calibrate_transfers" --csv "$data/02-transfers.csv" --timeline "$data/02-transfers-timeline.csv"
"$build/calibrate_zero_copy" --csv "$data/03-zero-copy.csv"
if command -v gnuplot >/dev/null 2>&1; then
  python3 "$top/docs/figures/plot.py"
else
  echo "gnuplot not found: the data is in docs/data; draw the figures with docs/figures/plot.py where gnuplot is"
fi
