#!/usr/bin/env bash
# The clean-build time of a target (default: everything, the binary, libraries, tests and
# benches), and its ratio to another revision's build of the same target, both measured in this
# run on this machine: each revision is cloned into a temporary folder, configured as README
# command 1 does, and built from nothing. Prints the seconds of each build, the ratio, and the ten
# slowest compiles of each (from ninja's log). With --demo, each revision then runs README
# command 1's `daemon --demo` on a fresh store, and the demo's seconds, their ratio and the time
# to the first result (build + demo) are printed as well.
# Usage: bench/build_time.sh [--baseline REV] [--revision REV] [--target NAME] [--demo] [--jobs N] [--keep]
#   --baseline REV  the revision to compare with (default: none, only the current build is timed)
#   --revision REV  the revision to time (default: HEAD)
#   --target NAME   the target to build, as `cmake --build --target` (README command 1 builds
#                   `tailforge`; default: everything)
#   --demo          also time `tailforge daemon --demo` of each revision
#   --jobs N        parallel jobs (default: ninja's default for the machine's cores)
#   --keep          keep the clones, build logs and demo stores (the folder is printed)
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
baseline="" revision="HEAD" target="" demo=0 jobs="" keep=0
usage="usage: bench/build_time.sh [--baseline REV] [--revision REV] [--target NAME] [--demo] [--jobs N] [--keep]"
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) baseline="$2"; shift 2 ;;
    --revision) revision="$2"; shift 2 ;;
    --target) target="$2"; shift 2 ;;
    --demo) demo=1; shift ;;
    --jobs) jobs="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done

work="$(mktemp -d /tmp/tailforge-build-time.XXXXXX)"
if [ "$keep" = 0 ]; then trap 'rm -rf "$work"' EXIT; else echo "kept in $work"; fi

declare -A build_seconds demo_seconds  # by name: current, baseline

seconds_between() { echo "$2 - $1" | bc; }

# Clones `rev` into $work/<name>, builds the target clean, and prints its seconds on stdout.
time_build() {
  local rev="$1" name="$2" tree="$work/$2"
  git clone --quiet --no-checkout "$repo" "$tree"
  git -C "$tree" checkout --quiet "$(git -C "$repo" rev-parse "$rev")"
  cmake -S "$tree" -B "$tree/build" -G Ninja > "$work/$name.configure.log"
  local start end
  start=$(date +%s.%N)
  cmake --build "$tree/build" ${target:+--target "$target"} ${jobs:+-j "$jobs"} > "$work/$name.build.log"
  end=$(date +%s.%N)
  seconds_between "$start" "$end"
}

# Runs the built revision's `daemon --demo` on a fresh store and prints its seconds on stdout.
time_demo() {
  local name="$1" tree="$work/$1"
  local start end
  start=$(date +%s.%N)
  (cd "$tree" && ./build/tailforge daemon --demo --no-progress --db "$work/$name.db") > "$work/$name.demo.log" 2>&1
  end=$(date +%s.%N)
  seconds_between "$start" "$end"
}

slowest() {
  awk 'NR > 1 { printf "%8.1f s  %s\n", ($2 - $1) / 1000, $4 }' "$work/$1/build/.ninja_log" | sort -rn | sed -n 1,10p
}

ratio() { echo "$1 / $2" | bc -l; }

measure() {
  local rev="$1" name="$2"
  build_seconds[$name]=$(time_build "$rev" "$name")
  printf "%-10s %s: build %.0f s\n" "$rev" "$(git -C "$repo" rev-parse --short "$rev")" "${build_seconds[$name]}"
  echo "slowest compiles:"
  slowest "$name"
  if [ "$demo" = 1 ]; then
    demo_seconds[$name]=$(time_demo "$name")
    printf "%-10s daemon --demo %.0f s, first result (build + demo) %.0f s\n" "$rev" "${demo_seconds[$name]}" \
      "$(echo "${build_seconds[$name]} + ${demo_seconds[$name]}" | bc)"
  fi
}

echo "clean build of ${target:-everything}, $(nproc) cores${jobs:+, -j $jobs}"
measure "$revision" current
if [ -n "$baseline" ]; then
  measure "$baseline" baseline
  printf "ratio %s / %s: build %.2f\n" "$revision" "$baseline" \
    "$(ratio "${build_seconds[current]}" "${build_seconds[baseline]}")"
  if [ "$demo" = 1 ]; then
    printf "ratio %s / %s: daemon --demo %.2f, first result %.2f\n" "$revision" "$baseline" \
      "$(ratio "${demo_seconds[current]}" "${demo_seconds[baseline]}")" \
      "$(ratio "$(echo "${build_seconds[current]} + ${demo_seconds[current]}" | bc)" \
               "$(echo "${build_seconds[baseline]} + ${demo_seconds[baseline]}" | bc)")"
  fi
fi
