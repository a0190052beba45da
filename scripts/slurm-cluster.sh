#!/usr/bin/env bash
# A single-node Slurm cluster from Debian's slurm-wlm and munge, for the cohort --slurm smoke
# test: munged, slurmctld and slurmd run from a temporary folder (key, config, state, spool,
# sockets and logs all inside it), on free ports, as root (CI runs as root).
#   scripts/slurm-cluster.sh start DIR   starts them; prints the environment to source
#                                        (SLURM_CONF and the daemons' PIDs, also in DIR/env)
#   scripts/slurm-cluster.sh stop DIR    stops exactly the daemons DIR/env names, by PID
set -euo pipefail
cmd=${1:?usage: slurm-cluster.sh start|stop DIR}
dir=${2:?usage: slurm-cluster.sh start|stop DIR}

stop() {
  [ -f "$dir/env" ] || return 0
  # shellcheck disable=SC1091
  . "$dir/env"
  for pid in ${SLURMD_PID:-} ${SLURMCTLD_PID:-} ${MUNGED_PID:-}; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in ${SLURMD_PID:-} ${SLURMCTLD_PID:-} ${MUNGED_PID:-}; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -f "$dir/env"
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "slurm-cluster: unknown command $cmd (start|stop)" >&2; exit 2; }
for p in munged slurmctld slurmd sbatch; do
  command -v "$p" >/dev/null || { echo "slurm-cluster: $p not found (Debian packages munge and slurm-wlm; scripts/setup-deps.sh test installs them)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "slurm-cluster: run as root (slurmd starts jobs as their users)" >&2; exit 1; }

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
chmod 0755 "$dir"
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
chmod 0700 "$dir/munge"
head -c 1024 /dev/urandom > "$dir/munge/munge.key"
chmod 0400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" --log-file="$dir/log/munged.log"
for _ in $(seq 50); do [ -s "$dir/munge/munged.pid" ] && break; sleep 0.1; done
munged_pid=$(cat "$dir/munge/munged.pid")

# Two free TCP ports for slurmctld and slurmd.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 20000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}
host=$(hostname -s)
mem=$(awk '/MemTotal/ {print int($2/1024*0.8)}' /proc/meminfo)
cat > "$dir/slurm.conf" <<CONF
ClusterName=hubscope
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
MinJobAge=600
KillWait=2
PlugStackConfig=$dir/plugstack.conf
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
: > "$dir/plugstack.conf"
export SLURM_CONF="$dir/slurm.conf"
slurmctld -D -c -f "$SLURM_CONF" > "$dir/log/slurmctld.out" 2>&1 &
ctld=$!
slurmd -D -f "$SLURM_CONF" > "$dir/log/slurmd.out" 2>&1 &
sd=$!
cat > "$dir/env" <<ENV
export SLURM_CONF=$dir/slurm.conf
MUNGED_PID=$munged_pid
SLURMCTLD_PID=$ctld
SLURMD_PID=$sd
ENV
for _ in $(seq 100); do
  if sinfo -h -o '%t' 2>/dev/null | grep -qx 'idle'; then cat "$dir/env"; exit 0; fi
  sleep 0.2
done
echo "slurm-cluster: the node did not come up idle within 20 s; logs in $dir/log:" >&2
tail -5 "$dir/log/"*.log "$dir/log/"*.out >&2 || true
stop
exit 1
