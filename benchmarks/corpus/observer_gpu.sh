#!/usr/bin/env bash
# The in-process observer check on one GPU host, in parts that each fit one 10-minute call:
#   bash benchmarks/corpus/observer_gpu.sh OUT 1|2|3|A|B
# (carry .whl-run, the notebook-free wheels: msgspec, nvtx, nvidia-ml-py; and .corpus, laid out
# by layout.py). Part 1: the capture's pieces on the DDP tutorial's step shape (each piece's
# step ratio and its own time a step), the DDP tutorial and the MNIST CNN in their own process;
# part 2: the MNIST VAE, the MNIST LSTM and Lightning Fabric's MNIST; part 3: DCGAN and the DDP
# tutorial again. Where device time is short, A and B are the scripts alone, in two calls:
# A the DDP tutorial, the MNIST CNN and DCGAN; B the VAE, the LSTM and Fabric. Where a call is
# taken back after about five minutes, name the scripts: observer_gpu.sh OUT only ID [ID ...].
# A script runs for its manifest's inprocess_stop_s ($OBSERVER_TIMEOUT_S wins) within
# $OBSERVER_CALL_S seconds (default 240) of its start-up: one script alone in a call may run
# longer (OBSERVER_TIMEOUT_S=260 OBSERVER_CALL_S=290).
# $OBSERVER_CPUS (a CPU list, e.g. 2-5; read by observer_inprocess.py) pins each script with
# its workers: on the H200 host a process pinned to one core keeps one speed for its whole run
# (§21, session 44), where unpinned its host-bound steps wander between two. Session 49 pinned
# the MNIST scripts to 4 CPUs (main process, DataLoader worker, pin-memory thread): the VAE's
# rounds narrowed (σ of the log ratio 0.16 -> 0.115), the CNN's and LSTM's did not (0.17-0.22),
# their single worker's pace moving between two levels. DCGAN's manifest entry aligns its blocks
# to whole DataLoader epochs ("align": "epoch", session 50), each read by its mean. Each script's results go
# to OUT/<id>[-again]/observer_inprocess.json as it ends, packed into OUT/<id>[-again].tgz (one
# file a script), so a call cut short keeps the ones before; unpack them, then record them with
# observer_record.py CALL DEVICE FOLDER....
set -u -o pipefail
OUT=${1:?usage: observer_gpu.sh OUT 1|2|3|A|B|only ID...}
PART=${2:?usage: observer_gpu.sh OUT 1|2|3|A|B|only ID...}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl-run/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv || true

one() {  # one script in its own process, its pieces switched on and off: ID [FOLDER]
  local dir="$OUT/${2:-$1}"
  mkdir -p "$dir"
  # the GPU's clock and load, and where the script's busy threads run, beside its log: a step
  # that jumps between two speeds shows whether the GPU's clock or a thread's core moved
  nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu,power.draw --format=csv,noheader \
    -lms 500 > "$dir/gpu.csv" 2>/dev/null &
  local smi=$!
  (while sleep 1; do date +%s.%N; ps -eLo pid,tid,psr,pcpu,comm --no-headers |
     awk '$4 > 5 && $5 ~ /python|pt_/'; done) > "$dir/threads.txt" 2>/dev/null &
  local threads=$!
  timeout "${OBSERVER_CALL_S:-240}" python3 benchmarks/corpus/observer_inprocess.py .corpus "$dir" "$1" > "$dir/log.txt" 2>&1
  kill "$smi" "$threads" 2>/dev/null
  grep -E "rounds: " "$dir/log.txt" || tail -3 "$dir/log.txt"
  # one file a script: the GPU machine sends back only so many files a call
  tar czf "$dir.tgz" -C "$OUT" "${2:-$1}" && rm -rf "$dir"
}

case "$PART" in
  1)
    timeout 150 python3 benchmarks/bench_capture_pieces.py --shape ddp --processes 2 --rounds 200 \
      --block 10 --pieces session,hooks,mark-only,bare-hook,stalls --json "$OUT/ddp_pieces.json" \
      > "$OUT/ddp_pieces.txt" 2>&1
    tail -6 "$OUT/ddp_pieces.txt"
    one ddp-tutorial-1gpu
    one mnist-cnn
    ;;
  2)
    one vae-mnist
    one mnist-rnn
    one fabric-mnist
    ;;
  3)
    one dcgan-fake
    one ddp-tutorial-1gpu ddp-tutorial-1gpu-again
    ;;
  A)
    one ddp-tutorial-1gpu
    one mnist-cnn
    one dcgan-fake
    ;;
  B)
    one vae-mnist
    one mnist-rnn
    one fabric-mnist
    ;;
  only)
    shift 2
    for id in "$@"; do one "$id"; done
    ;;
  *) echo "no such part: $PART (1, 2, 3, A, B or only ID...)" >&2; exit 2 ;;
esac
ls -la "$OUT"
