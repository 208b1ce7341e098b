#!/usr/bin/env bash
# Runs a command on this machine as if the CUDA toolkit were not installed: in a mount namespace
# (bubblewrap) where every CUDA install folder is an empty tmpfs and every nvcc, ptxas,
# cuobjdump, nvdisasm (and their helpers) found on PATH reads as /dev/null, which cannot be run.
# CI runs README command 2 this way, so that the suite stays green where the toolkit is absent.
#   scripts/without_cuda.sh ctest --test-dir build -LE long
set -euo pipefail
if [ $# -eq 0 ]; then
  echo "usage: scripts/without_cuda.sh COMMAND [ARG...]" >&2
  exit 2
fi
command -v bwrap > /dev/null || { echo "without_cuda: bwrap not found (scripts/setup.sh installs it)" >&2; exit 1; }

hide=()
hidden=()
# The toolkit's folders: /usr/local/cuda (usually a link) and the versioned folders beside it.
for dir in /usr/local/cuda /usr/local/cuda-* /opt/cuda; do
  [ -d "$dir" ] || continue
  real=$(readlink -f "$dir")
  case " ${hidden[*]-} " in *" $real "*) continue ;; esac
  hide+=(--tmpfs "$real")
  hidden+=("$real")
done
# Its programs anywhere on PATH (wrappers in /usr/local/bin, Debian's nvidia-cuda-toolkit in /usr/bin).
IFS=: read -r -a path_dirs <<< "${PATH}"
for name in nvcc ptxas cuobjdump nvdisasm nvlink fatbinary cudafe++ bin2c nvprune cu++filt; do
  for dir in "${path_dirs[@]}"; do
    file="$dir/$name"
    [ -e "$file" ] || continue
    real=$(readlink -f "$file")
    case "$real" in /usr/local/cuda*|/opt/cuda*) continue ;; esac  # inside a folder hidden above
    hide+=(--ro-bind /dev/null "$real")
    hidden+=("$real")
  done
done
echo "without_cuda: hiding ${hidden[*]-nothing (no CUDA toolkit found)}" >&2
exec bwrap --dev-bind / / "${hide[@]}" -- "$@"
