#!/usr/bin/env bash
# Starts and stops a throw-away one-node Slurm cluster (munged, slurmctld, slurmd)
# whose every file lives under one directory, so tests can submit jobs (job arrays,
# one fake GPU per task) on a machine without a real cluster or a real GPU.
#
#   scripts/slurm_one_node.sh start DIR   # prints "export ..." lines for clients
#   scripts/slurm_one_node.sh stop DIR
#
# Typical use:  eval "$(scripts/slurm_one_node.sh start /tmp/tfslurm)"
#               sbatch --partition tf --gpus-per-task 1 --output ... --wrap '...'
#               scripts/slurm_one_node.sh stop /tmp/tfslurm
#
# The cluster has one partition "tf" (the default) with this machine's CPUs and two
# "gpu" GRES backed by nothing (DIR/dev/gpu0 and gpu1 link to /dev/null), so
# --gpus-per-task 1 --ntasks 1 and --gres gpu:1 are accepted; two such jobs run at
# a time. Jobs run as the user who submits them (daemons run as the user who calls
# start: root, or an ordinary user whose jobs then all run as that user). Ports are
# chosen free at start. Each start clears DIR's state, so job ids begin at 1 again.
# The system's munged, /etc/munge and /etc/slurm are never used: the munge key and
# socket are under DIR and slurm.conf names that socket (AuthInfo=socket=...), which
# is how clients (sbatch, squeue, ...) find it once SLURM_CONF is set.
# Needs the Debian packages slurm-wlm and munge (scripts/setup.sh installs them).
set -euo pipefail

# Daemons live in /usr/sbin, which is not on an ordinary user's PATH on Debian.
PATH=$PATH:/usr/sbin:/sbin

readonly START_TIMEOUT_S=30
readonly STOP_TIMEOUT_S=15
readonly REAL_MEMORY_MB=1000

die() {
  echo "slurm_one_node: $*" >&2
  exit 1
}

log() {
  echo "slurm_one_node: $*" >&2
}

usage() {
  die "usage: $0 start|stop DIR"
}

require_commands() {
  local c
  for c in munged mungekey slurmctld slurmd sinfo scontrol squeue scancel; do
    command -v "$c" >/dev/null 2>&1 ||
      die "'$c' not found: install the Debian packages slurm-wlm and munge (scripts/setup.sh)"
  done
}

# The last lines of a log file, on one line, for an error message.
log_tail() {
  if [ -s "$1" ]; then
    tail -n 5 "$1" | tr '\n' ' '
  else
    echo "(log $1 is empty)"
  fi
}

# True if process $1 exists, is named $2 and is not a zombie (an exited daemon
# stays a zombie until init reaps it, and kill -0 still succeeds on it).
is_running() {
  local pid=$1 name=$2 comm state
  comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
  # /proc/PID/stat is "PID (COMM) STATE ...".
  state=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d ' ' -f 1) || return 1
  [ "$comm" = "$name" ] && [ "$state" != Z ]
}

# The pid in run/NAME.pid if that daemon is running, else nothing.
live_pid() {
  local dir=$1 name=$2 pid
  pid=$(cat "$dir/run/$name.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && is_running "$pid" "$name"; then
    echo "$pid"
  fi
}

port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# A TCP port nobody listens on, from a range ephemeral ports do not use.
free_port() {
  local port tries
  for tries in $(seq 1 50); do
    port=$((20000 + RANDOM % 12000))
    if [ "$port" != "${1:-}" ] && ! port_in_use "$port"; then
      echo "$port"
      return 0
    fi
  done
  die "found no free TCP port"
}

# CPU layout as slurmd sees it, e.g. "CPUs=2 Boards=1 SocketsPerBoard=1 ...".
node_cpu_layout() {
  slurmd -C | head -n 1 | tr ' ' '\n' | grep -E '^(CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)=' | tr '\n' ' '
}

make_dirs() {
  local dir=$1
  mkdir -p "$dir"
  # munged wants the directories of its socket searchable by everyone and the
  # directories of its key not writable by others.
  chmod 755 "$dir"
  rm -rf "$dir/state" "$dir/spool" "$dir/run" "$dir/munge" "$dir/dev"
  mkdir -p "$dir/state" "$dir/spool" "$dir/run" "$dir/log" "$dir/munge" "$dir/dev"
  ln -s /dev/null "$dir/dev/gpu0"
  ln -s /dev/null "$dir/dev/gpu1"
  chmod 755 "$dir/munge" "$dir/run"
  : >"$dir/log/munged.log"
  : >"$dir/log/slurmctld.log"
  : >"$dir/log/slurmd.log"
}

write_slurm_conf() {
  local dir=$1 node=$2 user=$3 ctld_port=$4 slurmd_port=$5
  cat >"$dir/slurm.conf" <<EOF
# Written by scripts/slurm_one_node.sh: a one-node test cluster, all files under $dir.
ClusterName=tailforge
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
InactiveLimit=0
MinJobAge=300
NodeName=$node NodeAddr=127.0.0.1 $(node_cpu_layout)RealMemory=$REAL_MEMORY_MB Gres=gpu:2 State=UNKNOWN
PartitionName=tf Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  # Slurm drops a GPU without a device file and wants a character device:
  # dev/gpu0 and gpu1 link to /dev/null (no task plugin confines devices). The
  # trailing digits give jobs CUDA_VISIBLE_DEVICES=0 or 1, as on a real GPU node.
  cat >"$dir/gres.conf" <<EOF
AutoDetect=off
NodeName=$node Name=gpu File=$dir/dev/gpu[0-1]
EOF
}

start_munged() {
  local dir=$1
  mungekey --create --keyfile="$dir/munge/munge.key" ||
    die "mungekey could not create $dir/munge/munge.key"
  munged --key-file="$dir/munge/munge.key" \
    --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/run/munged.pid" \
    --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" ||
    die "munged failed to start: $(log_tail "$dir/log/munged.log")"
}

# Runs a daemon that forks itself away; fails if it is not alive a moment later.
start_slurm_daemon() {
  local dir=$1 name=$2
  shift 2
  "$@" || die "$name failed to start: $(log_tail "$dir/log/$name.log")"
  wait_for_pid "$dir" "$name"
}

wait_for_pid() {
  local dir=$1 name=$2 i
  for i in $(seq 1 50); do
    if [ -n "$(live_pid "$dir" "$name")" ]; then
      return 0
    fi
    sleep 0.1
  done
  die "$name did not start: $(log_tail "$dir/log/$name.log")"
}

wait_for_idle_node() {
  local dir=$1 node=$2 state deadline name
  deadline=$((SECONDS + START_TIMEOUT_S))
  while [ "$SECONDS" -lt "$deadline" ]; do
    state=$(sinfo --noheader --node "$node" --format '%T' 2>/dev/null | head -n 1 || true)
    case "$state" in
      idle) return 0 ;;
      drain* | down* | fail* | inval*)
        die "node $node is $state: $(scontrol show node "$node" | grep -o 'Reason=.*' || true)" ;;
    esac
    for name in munged slurmctld slurmd; do
      [ -n "$(live_pid "$dir" "$name")" ] ||
        die "$name exited: $(log_tail "$dir/log/$name.log")"
    done
    sleep 0.2
  done
  die "node $node not idle after ${START_TIMEOUT_S}s (state '${state:-unknown}'): $(log_tail "$dir/log/slurmctld.log")"
}

cmd_start() {
  local dir node user ctld_port slurmd_port name
  dir=$(realpath -m "$1")
  require_commands
  for name in munged slurmctld slurmd; do
    [ -z "$(live_pid "$dir" "$name")" ] ||
      die "$name from an earlier start is still running under $dir: run '$0 stop $dir' first"
  done
  node=$(hostname -s)
  user=$(id -un)
  ctld_port=$(free_port)
  slurmd_port=$(free_port "$ctld_port")
  # A failed start stops what it had started: die exits, which runs this trap
  # (it sees this function's $dir, as exit happens before the function returns).
  trap 'stop_daemons "$dir"' EXIT
  make_dirs "$dir"
  write_slurm_conf "$dir" "$node" "$user" "$ctld_port" "$slurmd_port"
  export SLURM_CONF=$dir/slurm.conf
  start_munged "$dir"
  start_slurm_daemon "$dir" slurmctld slurmctld -c -f "$SLURM_CONF"
  start_slurm_daemon "$dir" slurmd slurmd -N "$node" -f "$SLURM_CONF"
  wait_for_idle_node "$dir" "$node"
  trap - EXIT
  log "node $node idle (partition tf, 2 gpus, ports $ctld_port/$slurmd_port) after ${SECONDS}s"
  echo "export SLURM_CONF=$dir/slurm.conf"
}

# Sends SIGTERM, then SIGKILL if the process outlives STOP_TIMEOUT_S.
stop_daemon() {
  local dir=$1 name=$2 pid i
  pid=$(live_pid "$dir" "$name")
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 $((STOP_TIMEOUT_S * 10))); do
    is_running "$pid" "$name" || return 0
    sleep 0.1
  done
  log "$name (pid $pid) ignored SIGTERM for ${STOP_TIMEOUT_S}s; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
}

# Jobs outlive slurmd (their slurmstepd is a separate process), so cancel them first.
cancel_jobs() {
  local i
  [ -n "$(live_pid "$1" slurmctld)" ] || return 0
  squeue --noheader --format '%A' | xargs -r scancel 2>/dev/null || true
  for i in $(seq 1 $((STOP_TIMEOUT_S * 5))); do
    [ -z "$(squeue --noheader --format '%A' 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  log "jobs still listed after scancel: $(squeue --noheader --format '%A %T' | tr '\n' ' ')"
}

stop_daemons() {
  stop_daemon "$1" slurmd
  stop_daemon "$1" slurmctld
  stop_daemon "$1" munged
}

cmd_stop() {
  local dir
  dir=$(realpath -m "$1")
  [ -d "$dir" ] || die "no directory $dir"
  export SLURM_CONF=$dir/slurm.conf
  cancel_jobs "$dir"
  stop_daemons "$dir"
  log "stopped the cluster under $dir"
}

main() {
  [ $# -eq 2 ] || usage
  case "$1" in
    start) cmd_start "$2" ;;
    stop) cmd_stop "$2" ;;
    *) usage ;;
  esac
}

main "$@"
