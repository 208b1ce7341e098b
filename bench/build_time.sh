#!/usr/bin/env bash
# The clean-build time of everything (tailforge, the libraries, tests and benches), and its ratio
# to another revision's, both measured in this run on this machine: each revision is cloned into
# a temporary folder, configured as README command 1 does, and built from nothing. Prints the
# seconds of each build, the ratio, and the ten slowest files of each (from ninja's log).
# Usage: bench/build_time.sh [--baseline REV] [--revision REV] [--jobs N] [--keep]
#   --baseline REV  the revision to compare with (default: none, only the current build is timed)
#   --revision REV  the revision to time (default: HEAD)
#   --jobs N        parallel jobs (default: ninja's default for the machine's cores)
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
baseline="" revision="HEAD" jobs="" keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) baseline="$2"; shift 2 ;;
    --revision) revision="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: bench/build_time.sh [--baseline REV] [--revision REV] [--jobs N] [--keep]" >&2; exit 2 ;;
  esac
done

work="$(mktemp -d /tmp/tailforge-build-time.XXXXXX)"
if [ "$keep" = 0 ]; then trap 'rm -rf "$work"' EXIT; fi

# Clones `rev` into $work/<name>, builds it clean, and prints its seconds on stdout.
time_build() {
  local rev="$1" name="$2" tree="$work/$2"
  git clone --quiet --no-checkout "$repo" "$tree"
  git -C "$tree" checkout --quiet "$(git -C "$repo" rev-parse "$rev")"
  cmake -S "$tree" -B "$tree/build" -G Ninja > "$work/$name.configure.log"
  local start end
  start=$(date +%s.%N)
  cmake --build "$tree/build" ${jobs:+-j "$jobs"} > "$work/$name.build.log"
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

slowest() {
  awk 'NR > 1 { printf "%8.1f s  %s\n", ($2 - $1) / 1000, $4 }' "$work/$1/build/.ninja_log" | sort -rn | head -10
}

echo "clean build of everything, $(nproc) cores${jobs:+, -j $jobs}"
current_seconds=$(time_build "$revision" current)
printf "%-10s %s: %.0f s\n" "$revision" "$(git -C "$repo" rev-parse --short "$revision")" "$current_seconds"
echo "slowest files:"
slowest current
if [ -n "$baseline" ]; then
  baseline_seconds=$(time_build "$baseline" baseline)
  printf "%-10s %s: %.0f s\n" "$baseline" "$(git -C "$repo" rev-parse --short "$baseline")" "$baseline_seconds"
  echo "slowest files:"
  slowest baseline
  printf "ratio %s / %s: %.2f\n" "$revision" "$baseline" "$(echo "$current_seconds / $baseline_seconds" | bc -l)"
fi
