#!/usr/bin/env bash
# A Spark standalone cluster on this machine, on loopback: one master and one
# or more workers, started with the installed pyspark's own spark-class (no
# Spark download). The cluster the test suite runs subsum against
# (tests/test_cluster.py); README.md, "Running on a Spark cluster".
#
#   scripts/local-cluster.sh start   start the daemons; print the master URL
#   scripts/local-cluster.sh url     print the master URL of the running cluster
#   scripts/local-cluster.sh stop    stop the daemons (by PID), remove nothing else
#
# Settings (environment):
#   SUBSUM_CLUSTER_DIR   state, logs and work folder (default: .local-cluster)
#   WORKERS              how many workers (default 1)
#   WORKER_CORES         cores each worker offers (default 2)
#   WORKER_MEMORY        memory each worker offers (default 1g)
#   PYTHON               the Python with pyspark installed (default: .venv/bin/python, else python3)
#   PIN_WORKERS          1: pin worker K, its executors and their Python workers to its own
#                        WORKER_CORES CPUs (taskset; CPUs (K-1)*WORKER_CORES onwards, modulo the
#                        machine's): a worker of one core then uses one core, as on a real cluster,
#                        not the idle cores of this machine (default 0)
# Ports are ephemeral: the master's is read from its log. Exit 0 on success,
# 1 when a daemon did not come up (its log is printed), 2 on a usage error.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
state="${SUBSUM_CLUSTER_DIR:-.local-cluster}"
cores="${WORKER_CORES:-2}"
workers="${WORKERS:-1}"
memory="${WORKER_MEMORY:-1g}"
pin="${PIN_WORKERS:-0}"
if [ -z "${PYTHON:-}" ]; then
  if [ -x "$here/.venv/bin/python" ]; then PYTHON="$here/.venv/bin/python"; else PYTHON=python3; fi
fi

usage() { echo "usage: $0 start|url|stop" >&2; exit 2; }
[ $# -eq 1 ] || usage
case "$workers" in ''|*[!0-9]*|0) echo "error: WORKERS must be a whole number of at least 1, got '$workers'" >&2; exit 2 ;; esac
case "$pin" in 0|1) ;; *) echo "error: PIN_WORKERS must be 0 or 1, got '$pin'" >&2; exit 2 ;; esac
cpus_of() {  # cpus_of K: the CPU list of worker K when pinned
  local n first list="" c
  n="$(nproc)"
  first=$(( (($1 - 1) * cores) ))
  for c in $(seq 0 $((cores - 1))); do list="$list${list:+,}$(( (first + c) % n ))"; done
  echo "$list"
}

wait_for() {  # wait_for FILE PATTERN SECONDS PID: until the log shows PATTERN
  local file="$1" pattern="$2" seconds="$3" pid="$4"
  for _ in $(seq 1 $((seconds * 5))); do
    if grep -q "$pattern" "$file" 2>/dev/null; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.2
  done
  echo "error: the daemon logging to $file did not report '$pattern' within ${seconds}s; its log:" >&2
  tail -n 40 "$file" >&2 || true
  return 1
}

stop_pid() {  # stop_pid FILE: TERM, then KILL after 10 s; remove the PID file
  local file="$1" pid
  [ -f "$file" ] || return 0
  pid="$(cat "$file")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

case "$1" in
  start)
    if [ -f "$state/master.pid" ] && kill -0 "$(cat "$state/master.pid")" 2>/dev/null; then
      echo "error: a cluster is running already (master PID $(cat "$state/master.pid")); '$0 stop' first" >&2
      exit 1
    fi
    spark_home="$("$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')" || {
      echo "error: $PYTHON cannot import pyspark; run 'make test' once (it builds .venv) or set PYTHON" >&2; exit 1; }
    mkdir -p "$state/work"
    state="$(cd "$state" && pwd)"
    export SPARK_HOME="$spark_home" SPARK_LOCAL_IP=127.0.0.1 SPARK_WORKER_DIR="$state/work" SPARK_LOG_DIR="$state"
    # The master: RPC and web UI on ports the kernel picks.
    nohup "$spark_home/bin/spark-class" org.apache.spark.deploy.master.Master \
      --host 127.0.0.1 --port 0 --webui-port 0 >"$state/master.log" 2>&1 &
    echo $! >"$state/master.pid"
    wait_for "$state/master.log" "Starting Spark master at spark://" 60 "$(cat "$state/master.pid")" || { stop_pid "$state/master.pid"; exit 1; }
    url="$(grep -o 'spark://127\.0\.0\.1:[0-9]*' "$state/master.log" | head -n 1)"
    echo "$url" >"$state/master-url"
    # The workers: small, so that the tests also see what an under-sized cluster does.
    for k in $(seq 1 "$workers"); do
      pinned=()
      if [ "$pin" = 1 ]; then pinned=(taskset -c "$(cpus_of "$k")"); fi
      nohup "${pinned[@]}" "$spark_home/bin/spark-class" org.apache.spark.deploy.worker.Worker \
        --host 127.0.0.1 --port 0 --webui-port 0 --cores "$cores" --memory "$memory" --work-dir "$state/work" \
        "$url" >"$state/worker-$k.log" 2>&1 &
      echo $! >"$state/worker-$k.pid"
      wait_for "$state/worker-$k.log" "Successfully registered with master" 60 "$(cat "$state/worker-$k.pid")" || {
        for pid in "$state"/worker-*.pid; do stop_pid "$pid"; done; stop_pid "$state/master.pid"; exit 1; }
    done
    echo "$url"
    ;;
  url)
    [ -f "$state/master-url" ] && [ -f "$state/master.pid" ] && kill -0 "$(cat "$state/master.pid")" 2>/dev/null || {
      echo "error: no cluster is running under $state; '$0 start' first" >&2; exit 1; }
    cat "$state/master-url"
    ;;
  stop)
    for pid in "$state"/worker-*.pid "$state/worker.pid"; do stop_pid "$pid"; done
    stop_pid "$state/master.pid"
    rm -f "$state/master-url"
    ;;
  *) usage ;;
esac
