#!/usr/bin/env bash
# cohort --slurm against a real single-node Slurm cluster (scripts/slurm-cluster.sh): a
# 6-subject phantom cohort analysed locally and through a job array + group step; one array
# task cancelled with scancel while pending and one mid-subject, --status, a rerun that
# resubmits only that subject, the resources and dependency as scontrol shows them, the
# results equal to the local run's byte for byte except timestamps, and the faults (sbatch
# refusing, sbatch missing, a task that does not see the output folder, the group step with a
# subject missing).
# Usage: scripts/slurm-smoke.sh bin/hubscope-helper   (as root; skipped when Slurm is absent
# unless HUBSCOPE_STRICT=1)
set -uo pipefail
bin=$(cd "$(dirname "${1:?usage: slurm-smoke.sh HELPER_BINARY}")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null || [ "$(id -u)" -ne 0 ]; then
  if [ "${HUBSCOPE_STRICT:-}" = 1 ]; then echo "slurm-smoke: needs root and Debian's slurm-wlm and munge (scripts/setup-deps.sh test)"; exit 1; fi
  echo "slurm-smoke: skipped (needs root and Debian's slurm-wlm and munge)"; exit 0
fi
work=$(mktemp -d)
cluster=$work/cluster
cleanup() { "$here/slurm-cluster.sh" stop "$cluster"; rm -rf "$work"; }
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass+1)); }
bad() { echo "FAIL $*"; fail=$((fail+1)); }
want() { # name, file, fixed string
  if grep -qF -- "$3" "$2"; then ok; else bad "$1: no '$3' in:"; sed 's/^/    /' "$2" | tail -8; fi
}

for s in "$here/slurm-cluster.sh" "$here/slurm-smoke.sh"; do bash -n "$s" && ok || bad "bash -n $s"; done

cd "$work"
"$bin" synth --subjects 6 --voxel-mm 14 --length 60 --out bids >/dev/null 2>&1 || bad "synth"
flags=(--backend cpu --density 0.05)
# The local run first, in the folder the Slurm run will use, so every path is spelled alike.
"$bin" cohort bids --out deriv "${flags[@]}" >/dev/null 2>&1 || bad "local cohort run"
mv deriv local

env=$("$here/slurm-cluster.sh" start "$cluster") || { echo "FAIL slurm-cluster start"; exit 1; }
eval "$env"
res=(--cpus-per-task 1 --mem 200M --time 10 --array-max 2 --norm-out norm --norm-group control)

# --dry-run: both scripts printed, they pass bash -n, nothing written or submitted.
"$bin" cohort bids --out deriv "${flags[@]}" --slurm "${res[@]}" --gpus-per-task 1 --dry-run > dry.txt 2>&1 || bad "dry run"
want "dry run resources" dry.txt "#SBATCH --gres=gpu:1"
want "dry run resources" dry.txt "#SBATCH --array=0-5%2"
awk '/^# .*array.sh$/{f=1;next} /^# .*group.sh$/{f=0} f' dry.txt > dry-array.sh
awk '/^# .*group.sh$/{f=1;next} /^# dry run/{f=0} f' dry.txt > dry-group.sh
for s in dry-array.sh dry-group.sh; do
  { [ -s "$s" ] && bash -n "$s"; } && ok || bad "bash -n of the dry run's $s"
done
[ -e deriv ] && bad "--dry-run wrote deriv" || ok
[ -z "$(squeue -h)" ] && ok || bad "--dry-run submitted a job"

# Faults before the real submission: sbatch refusing (no GPU on this node), sbatch missing,
# an unquotable value.
"$bin" cohort bids --out deriv "${flags[@]}" --slurm --gpus-per-task 1 > out.txt 2> err.txt; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l < err.txt)" -eq 1 ] && ok || bad "sbatch refusing: exit $rc, $(wc -l < err.txt) lines"
want "sbatch refusing" err.txt "sbatch refused"
want "sbatch refusing, its message" err.txt "sbatch: error:"
[ -e deriv/slurm/submit-001 ] && bad "a refused submission left deriv/slurm/submit-001" || ok
PATH=/nonexistent "$bin" cohort bids --out deriv "${flags[@]}" --slurm > out.txt 2> err.txt
want "sbatch missing" err.txt "sbatch not found on PATH"
"$bin" cohort bids --out deriv "${flags[@]}" --slurm --time '10; rm -rf /' > out.txt 2> err.txt
want "unquotable --time" err.txt 'want a time limit'
# Another submission into the folder holds its lock (here flock(1) holds it around ours): ours
# is refused in one line, before anything is planned or submitted.
mkdir -p deriv/slurm
flock deriv/slurm/lock "$bin" cohort bids --out deriv "${flags[@]}" --slurm "${res[@]}" > out.txt 2> err.txt; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l < err.txt)" -eq 1 ] && ok || bad "submission while another holds the lock: exit $rc, $(wc -l < err.txt) lines"
want "submission while another holds the lock" err.txt "another --slurm submission into this folder is under way"
{ [ ! -e deriv/slurm/submit-001 ] && [ -z "$(squeue -h)" ]; } && ok || bad "a submission refused for the lock left a folder or a job"

# The submission; task 5 (sub-06) is cancelled while it waits behind --array-max 2.
"$bin" cohort bids --out deriv "${flags[@]}" --slurm "${res[@]}" > sub1.txt 2>&1 || bad "submission"
array=$(awk '/^array/ {print $3}' sub1.txt | tr -d :)
group=$(awk '/^group/ {print $3}' sub1.txt)
[ -n "$array" ] && [ -n "$group" ] || { bad "no job ids in:"; cat sub1.txt; exit 1; }
scancel "${array}_5"
scontrol -o show job "$array" > job.txt
want "scontrol: array" job.txt "ArrayTaskThrottle=2"
want "scontrol: time" job.txt "TimeLimit=00:10:00"
want "scontrol: memory" job.txt "MinMemoryNode=200M"
want "scontrol: cpus" job.txt "CPUs/Task=1"
scontrol -o show job "$group" > gjob.txt
want "scontrol: dependency" gjob.txt "Dependency=afterok:${array}_*"
for _ in $(seq 300); do [ -z "$(squeue -h -r -j "$array" 2>/dev/null)" ] && break; sleep 0.2; done
"$bin" cohort deriv --status > st1.txt 2>&1 || bad "--status"
want "status after scancel" st1.txt "5 done (83%), 0 running, 0 pending, 1 failed"
want "status: the cancelled task" st1.txt "failed   sub-06 (task ${array}_5): never started (cancelled while pending"
want "status: the group waits" st1.txt "group    job $group PENDING"

# Re-running the same command submits only sub-06 and replaces the stranded group step.
"$bin" cohort bids --out deriv "${flags[@]}" --slurm "${res[@]}" > sub2.txt 2>&1 || bad "resubmission"
[ "$(grep -c '^submit ' sub2.txt)" -eq 1 ] && ok || bad "resubmission sent $(grep -c '^submit ' sub2.txt) subjects"
want "resubmission" sub2.txt "submit      sub-06"
want "resubmission" sub2.txt "cancelled   earlier group step $group"
group2=$(awk '/^group/ {print $3}' sub2.txt)
for _ in $(seq 300); do [ -z "$(squeue -h)" ] && break; sleep 0.2; done
"$bin" cohort deriv --status > st2.txt 2>&1
want "status at the end" st2.txt "6 subjects: 6 done (100%)"
want "status: group step" st2.txt "group    job $group2 COMPLETED"
want "status: the group step's group-mean network" st2.txt "group mean group/task-rest_desc-groupmean_hubscope"
[ -s deriv/group/task-rest_desc-groupmean_hubscope/cohort_complete.json ] && ok || bad "the group step built no group-mean network"

# Every task ran once and succeeded; the group step started after the last task finished.
last=0
for f in deriv/slurm/submit-001/task-{0,1,2,3,4}.log deriv/slurm/submit-002/task-0.log; do
  want "task log $f" "$f" "status 0"
  t=$(awk '/ finished / {print $(NF-2)}' "$f"); [ -n "$t" ] && last=$(awk -v a="$last" -v b="$t" 'BEGIN{print (b>a)?b:a}')
done
[ -e deriv/slurm/submit-001/task-5.log ] && bad "the cancelled task ran" || ok
want "CPU fallback said in the task log" deriv/slurm/submit-001/task-0.log "no GPU from Slurm (CUDA_VISIBLE_DEVICES unset): the CPU backend runs"
want "group log" deriv/slurm/submit-002/group.log "status 0"
[ -s norm/norm.json ] && ok || bad "the group step built no normative folder (--norm-out norm)"
gstart=$(awk '/ started / {print $NF}' deriv/slurm/submit-002/group.log)
awk -v g="$gstart" -v l="$last" 'BEGIN{exit !(g>=l)}' && ok || bad "the group step started ($gstart) before the last task finished ($last)"

# The results equal the local run's byte for byte, except timestamps (provenance "created"
# and stage "seconds", the zip entries' times in network.npz, and the markers' digests of
# those files).
python3 - local deriv <<'PY' && ok || bad "results differ from the local run"
import json, os, sys, zipfile
a, b = sys.argv[1], sys.argv[2]
def files(root):
    out = set()
    for d, dirs, fs in os.walk(root):
        dirs[:] = [x for x in dirs if os.path.relpath(os.path.join(d, x), root) != "slurm"]
        out |= {os.path.relpath(os.path.join(d, f), root) for f in fs}
    return out
def mask(o):
    if isinstance(o, dict):
        return {k: mask(v) for k, v in o.items() if k not in ("created", "seconds")}
    if isinstance(o, list):
        return [mask(v) for v in o]
    return o
fa, fb = files(a), files(b)
bad = sorted(fa ^ fb)
timed = set()
for rel in sorted(fa & fb):
    pa, pb = os.path.join(a, rel), os.path.join(b, rel)
    if open(pa, "rb").read() == open(pb, "rb").read():
        continue
    if rel.endswith(".npz"):
        za, zb = zipfile.ZipFile(pa), zipfile.ZipFile(pb)
        same = za.namelist() == zb.namelist() and all(za.read(n) == zb.read(n) for n in za.namelist())
    elif rel.endswith("provenance.json"):
        same = mask(json.load(open(pa))) == mask(json.load(open(pb)))
    else:
        same = False
    if same:
        timed.add(rel)
    elif not rel.endswith("cohort_complete.json"):
        bad.append(rel)
for rel in sorted(fa & fb):
    if rel.endswith("cohort_complete.json"):
        ma, mb = json.load(open(os.path.join(a, rel))), json.load(open(os.path.join(b, rel)))
        d = os.path.dirname(os.path.dirname(rel))
        for m in (ma, mb):
            for f in m["files"]:
                if os.path.join(d, f) in timed:
                    m["files"][f] = "timestamped"
        if ma != mb:
            bad.append(rel)
print("slurm-smoke: %d files compared, %d equal except timestamps" % (len(fa & fb), len(timed)))
if bad:
    print("differ:", bad[:10]); sys.exit(1)
PY

# A task cancelled mid-subject (a larger phantom, cancelled once the helper has begun it): its
# half-written bundle never counts, --status says CANCELLED, a rerun submits it again.
"$bin" synth --subjects 1 --voxel-mm 8 --length 150 --out big >/dev/null 2>&1 || bad "synth big"
"$bin" cohort big --out dbig "${flags[@]}" --slurm --cpus-per-task 1 > s3.txt 2>&1 || bad "big submission"
a3=$(awk '/^array/ {print $3}' s3.txt | tr -d :)
for _ in $(seq 600); do grep -q ": sub-01$" dbig/slurm/submit-001/task-0.log 2>/dev/null && break; sleep 0.05; done
sleep 0.3
scancel "${a3}_0"
for _ in $(seq 300); do [ -z "$(squeue -h -r -j "$a3" 2>/dev/null)" ] && break; sleep 0.2; done
"$bin" cohort dbig --status > st3.txt 2>&1
want "status after a mid-run scancel" st3.txt "failed   sub-01 (task ${a3}_0): CANCELLED"
ls dbig/sub-01/func/*_hubscope/cohort_complete.json >/dev/null 2>&1 && bad "the cancelled task left a completion marker" || ok
"$bin" cohort big --out dbig "${flags[@]}" --slurm --cpus-per-task 1 > s4.txt 2>&1 || bad "big resubmission"
want "mid-run cancel resubmitted" s4.txt "submit      sub-01"
for _ in $(seq 600); do [ -z "$(squeue -h)" ] && break; sleep 0.2; done
"$bin" cohort dbig --status > st4.txt 2>&1
want "status after the rerun" st4.txt "1 subjects: 1 done (100%)"

# A task whose node does not see the output folder (another token there) fails saying so.
cp deriv/slurm/submit-002/token token.bak
echo other > deriv/slurm/submit-002/token
SLURM_ARRAY_JOB_ID=0 SLURM_ARRAY_TASK_ID=0 bash deriv/slurm/submit-002/array.sh > out.txt 2> err.txt; rc=$?
[ $rc -eq 3 ] && ok || bad "task without the output folder: exit $rc"
want "shared filesystem" err.txt "put it on a filesystem the nodes share"
cp token.bak deriv/slurm/submit-002/token

# The group step with a subject's bundle gone refuses, naming it.
rm deriv/sub-03/func/sub-03_task-rest_hubscope/cohort_complete.json
"$bin" cohort bids --out deriv "${flags[@]}" --table-only > out.txt 2> err.txt && bad "group step with sub-03 missing succeeded"
want "group step refuses" err.txt "sub-03_task-rest"

echo "slurm-smoke: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
