#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build, test and run tailforge.
# Idempotent: packages already present are left alone. nvcc is not installed here
# (it comes with the machine's CUDA toolkit, /usr/local/cuda).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev libboost-regex-dev libcpp-httplib-dev nlohmann-json3-dev libsqlite3-dev sqlite3
  libspdlog-dev libfmt-dev doctest-dev libssl-dev libsystemd-dev
  gcc binutils openssl curl systemd
  clang-19 llvm-19 lld-19
  hipcc rocm-device-libs libhiprand-dev librocrand-dev libhipsparse-dev libomp-15-dev
  bubblewrap
  slurm-wlm munge
  chromium libjs-highlight.js
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
