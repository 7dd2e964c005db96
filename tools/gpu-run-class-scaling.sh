#!/usr/bin/env bash
# A class's throughput on one GPU and on every GPU of this machine (issue 43's scaling): N
# whole-course reference submissions graded with tools/grade-class on GPU 0 alone, then N x G on
# all G GPUs, each checked (tools/make-class.py check: every reference passes every test); each
# class has the untouched starter too, counted among its graded submissions. Prints
# the seconds per submission of each, the scaling (throughput on G GPUs over G x the throughput on
# one) and, from the one-GPU class, the time of 200 submissions. Logs, class files and each
# grading's timing.json, and with CLASS_ARGS=--profile its profile.txt (NAME-timing.tgz), what the
# machine did every 2 s (NAME-monitor.csv) and who held the turn files every 10 s (NAME-locks.txt), in LOGDIR;
# with --profile also the GPU's serial work per submission (tools/class-floor.py: NAME-floor.txt).
# Usage: tools/gpu-run-class-scaling.sh LOGDIR [N (default 12)] [N_ALL (default N x G)]
#   N = 0 skips the one-GPU class, N_ALL = 0 the class on every GPU (e.g. to measure them in two
#   calls of a device of limited time; the summary then gives each one's seconds alone).
# CLASS_ARGS="..." adds options to each grade-class (e.g. "--workers-per-gpu 12": how many
#   gradings a GPU takes at a time decides the throughput when the class waits on turns).
# CLASS_DEADLINE=S stops each class after S seconds (every grading still running is killed) and
#   writes the class files of the gradings done by then (grade-class --collect), so that a device
#   call's limit still brings back what finished; the summary says how many were graded.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
logs=$(mkdir -p "$1" && cd "$1" && pwd)
n=${2:-12}
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
count=$(echo "$gpus" | tr ',' '\n' | grep -c .)
n_all=${3:-$(( n * count ))}
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader | tee "$logs/device.txt"
echo "cores: $(nproc)" | tee -a "$logs/device.txt"
# Which cores and memory each GPU is near: a class on a machine of two sockets saw every
# reference's mapped-memory reads (chapter 03) at 0.55 of its pinned copies where one H100 alone
# gives 0.93 (2026-11-27); the topology tells whether the gradings ran far from their GPU.
{ nvidia-smi topo -m; lscpu | grep -Ei "numa|socket|model name"; } >"$logs/topology.txt" 2>&1
work=$(mktemp -d)
chmod 755 "$work"  # (mktemp's 0700 would keep the test users out: grade-class, as root, would warn and grade without them)
# The course without its builds and without .git: a course with .git is judged by its HEAD, and
# the device's copy of .git can be older than its files.
mkdir -p "$work/course"
(cd "$top" && tar --exclude=./build --exclude='./build-*' --exclude=./.git -cf - .) | tar -xf - -C "$work/course"
top=$work/course

# Every 2 s while a class runs, what the machine does (LOGDIR/NAME-monitor.csv): processor time
# busy (% of every core), each GPU's utilisation, and how many build and test processes run. Tells a
# class held up by its cores from one held up by its GPUs or by turns.
monitor() {  # monitor CSV (runs until killed)
  exec python3 - "$1" <<'PY'  # (exec: killing the job stops the sampler)
import glob, os, subprocess, sys, time
def cpu():
    fields = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    return sum(fields), fields[3] + fields[4]  # all, idle + iowait
def programs():  # the names of the processes running now
    names = []
    for path in glob.glob("/proc/[0-9]*/comm"):
        try:
            names.append(open(path).read().strip())
        except OSError:  # (gone meanwhile)
            pass
    return names
builds = {"cc1plus", "cicc", "ptxas", "nvcc", "ld", "fatbinary", "nvlink", "cudafe++", "c++", "g++"}
with open(sys.argv[1], "w", buffering=1) as out:
    out.write("seconds,cpu_busy_percent,load1,gpu_util_percent,gpu_memory_mib,build_processes,test_programs,"
              "chapter11_programs\n")
    start, (total, idle) = time.monotonic(), cpu()
    while True:
        time.sleep(2)
        t, i = cpu()
        busy = 100 * (1 - (i - idle) / max(1, t - total))
        total, idle = t, i
        try:
            smi = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu,memory.used", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True).stdout.split("\n")
        except OSError:  # (no nvidia-smi)
            smi = []
        util = "/".join(l.split(",")[0].strip() for l in smi if l.strip())
        mem = "/".join(l.split(",")[1].strip() for l in smi if l.strip())
        names = programs()
        building = sum(n in builds for n in names)
        testing = sum(n.startswith(("student_ch", "solution_ch")) for n in names)  # the course's test programs
        # Chapter 11's (its multi-GPU tests take turns on every GPU): how long they stay alive.
        of_every_gpu = sum(n.startswith(("student_ch11", "solution_ch11")) for n in names)
        out.write(f"{time.monotonic() - start:.0f},{busy:.0f},{os.getloadavg()[0]:.1f},{util},{mem},{building},{testing},"
                  f"{of_every_gpu}\n")
PY
}

grade() {  # grade NAME SUBMISSIONS GPUS
  local name=$1 subs=$2 on=$3
  python3 "$top/tools/make-class.py" make "$work/$name" --references "$subs" >/dev/null
  local start=$(date +%s)
  monitor "$logs/$name-monitor.csv" & local monitoring=$!
  # Every 10 s, who holds and who waits for the class's turn files (NAME-locks.txt): where a class
  # whose GPUs idle waits (the 2-GPU class that graded nothing, 2026-11-26 and -27).
  mkdir -p "$work/$name-graded/.locks"
  python3 "$top/tools/class-locks.py" "$work/$name-graded/.locks" --every 10 --out "$logs/$name-locks.txt" &
  local locking=$!
  if [ -n "${CLASS_DEADLINE:-}" ]; then
    # Each grading runs in a session of its own: those still running are killed by their paths below.
    timeout --kill-after=10 "$CLASS_DEADLINE" "$top/tools/grade-class" "$work/$name" \
      -o "$work/$name-graded" --gpus "$on" ${CLASS_ARGS:-} >"$logs/$name.log" 2>&1
  else
    "$top/tools/grade-class" "$work/$name" -o "$work/$name-graded" --gpus "$on" ${CLASS_ARGS:-} >"$logs/$name.log" 2>&1
  fi
  local status=$?
  if [ "$status" = 124 ] || [ "$status" = 137 ]; then
    for i in 1 2 3; do pkill -KILL -f "$work/" 2>/dev/null; sleep 1; done  # the gradings, their builds and tests
    echo "stopped at CLASS_DEADLINE=$CLASS_DEADLINE s; $(ls "$work/$name-graded"/*/results.json 2>/dev/null | wc -l) of $subs graded" \
      | tee -a "$logs/$name.log"
    "$top/tools/grade-class" --collect "$work/$name-graded" >>"$logs/$name.log" 2>&1
  fi
  local seconds=$(( $(date +%s) - start ))
  kill $monitoring $locking 2>/dev/null
  python3 "$top/tools/make-class.py" check "$work/$name-graded" "$work/$name" >"$logs/$name-check.txt" 2>&1
  local check=$?
  cp "$work/$name-graded/class.csv" "$logs/$name-class.csv" 2>/dev/null
  cp "$work/$name-graded/class-timing.csv" "$logs/$name-class-timing.csv" 2>/dev/null
  # System calls the sandbox refused or let run (each report's note): none is expected of references.
  grep -h "System calls" "$work/$name-graded"/*/report.md >"$logs/$name-syscalls.txt" 2>/dev/null
  echo "$name: $(wc -l <"$logs/$name-syscalls.txt") reports name system calls outside the sandbox's list" | tee -a "$logs/summary.txt"
  # Each grading's timing.json (phases, waits), in one file: a device run returns few files.
  # (with CLASS_ARGS=--profile, each grading's profile.txt too: where its test programs' time went)
  (cd "$work/$name-graded" && tar czf "$logs/$name-timing.tgz" */timing.json $(ls */profile.txt 2>/dev/null) 2>/dev/null)
  # The workers' folders of the gradings a deadline stopped (grade-class removes them when it ends):
  # their ctest logs and what ran one by one say where those gradings were and why (the class of
  # 2026-11-28 that graded none: every case ran alone, and nothing here said so).
  (cd "$work/$name-graded/.work" 2>/dev/null && tar czf "$logs/$name-workers.tgz" \
    $(ls worker-*/one-by-one.txt worker-*/every-gpu-one-by-one.txt worker-*/ctest-*.log 2>/dev/null) 2>/dev/null)
  # Each grading's own log (which phase it was in when a deadline stopped it), in one file too.
  (cd "$work/$name-graded" && tar czf "$logs/$name-grade-logs.tgz" $(ls */grade.log 2>/dev/null) 2>/dev/null)
  # (make-class adds the starter to the references: count what was graded, not what was asked.)
  local graded=$(ls "$work/$name-graded"/*/results.json 2>/dev/null | wc -l)
  printf '%s: %d references and the starter, %d graded, on GPUs %s: %d s, %s s per graded submission; grade-class exit %d, check exit %d (%s)\n' \
    "$name" "$subs" "$graded" "$on" "$seconds" "$(python3 -c "print(round($seconds / $graded, 1) if $graded else 'no')")" \
    "$status" "$check" "$(tail -1 "$logs/$name-check.txt")" | tee -a "$logs/summary.txt"
  # With CLASS_ARGS=--profile: the GPU's serial work per submission (contexts one at a time,
  # measurements' exclusive turns), the floor of a class on one GPU, against what it took.
  if ls "$work/$name-graded"/*/profile.txt >/dev/null 2>&1; then
    python3 "$top/tools/class-floor.py" "$work/$name-graded" --seconds "$seconds" --graded "$graded" --top 15 \
      >"$logs/$name-floor.txt" 2>&1
    grep -E "floor on one GPU|measured" "$logs/$name-floor.txt" | sed "s/^ */$name: /" | tee -a "$logs/summary.txt"
  fi
  # A class stopped at CLASS_DEADLINE has no throughput to compare: its seconds are not printed.
  # Otherwise the last line is "SECONDS GRADED" (the references and the starter).
  if [ "$status" != 124 ] && [ "$status" != 137 ]; then echo "$seconds $graded"; fi
}
[ "$n" -gt 0 ] && read -r one n_one < <(grade one-gpu "$n" 0 | tail -1 | grep -E "^[0-9]+ [0-9]+$")
[ "$n_all" -gt 0 ] && read -r all n_graded_all < <(grade all-gpus "$n_all" "$gpus" | tail -1 | grep -E "^[0-9]+ [0-9]+$")
[ -n "${one:-}" ] && python3 -c "print(f'200 submissions on one GPU at {$one / $n_one:.1f} s each: {200 * $one / $n_one / 60:.0f} minutes (goal: 40)')" | tee -a "$logs/summary.txt"
if [ -n "${one:-}" ] && [ -n "${all:-}" ]; then
  python3 - "$one" "$all" "$n_one" "$n_graded_all" "$count" <<'PY' | tee -a "$logs/summary.txt"
import sys
one, all_, n, n_all, g = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
scaling = (n_all / all_) / (g * n / one)
print(f"scaling: {n_all / all_ * 60:.1f} submissions a minute on {g} GPUs against {n / one * 60:.1f} on one: "
      f"{scaling:.2f} x {g} x the one-GPU throughput (goal: at least 0.8)")
PY
fi
# (grading.remove_tree: each grading's scratch folder is a file system of its own, detached first)
python3 -c "import sys; sys.path.insert(0, sys.argv[1]); from course_grading import grading; grading.remove_tree(sys.argv[2])" "$top/tools" "$work"
