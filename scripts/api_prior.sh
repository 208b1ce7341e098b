#!/usr/bin/env bash
# Writes policies/api_prior.json, the shipped usage prior of the CUDA API (counts only): how many
# files of real CUDA trees use each name of the API table, and how many CUDA header files mention
# it. A store with imported trees uses their counts instead (`tailforge import`).
#   scripts/api_prior.sh [BUILD_DIR] [TREE...]
# Defaults: build/, the trees of ../shared/corpus, the CUDA headers of $CUDA_HOME or /usr/local/cuda.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
trees=("$@")
if [ ${#trees[@]} -eq 0 ]; then
  for tree in "$root"/../shared/corpus/*/; do trees+=("${tree%/}"); done
fi
args=()
for tree in "${trees[@]}"; do args+=(--tree "$tree"); done
"$build/tailforge" api-prior "${args[@]}" --out "$root/policies/api_prior.json"
