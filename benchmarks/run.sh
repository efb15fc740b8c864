#!/usr/bin/env bash
# Runs every timer benchmark of rpc-timer's wheel against the peers, in one run, and writes
# benchmarks/results/timer-<mode>.json (raw numbers, ratios, targets), .md (tables), .png (chart) and .log.
#
#   benchmarks/run.sh quick   # about 10 min on a quiet machine: 1 JMH fork, short iterations, 1 lateness round
#   benchmarks/run.sh full    # about 35 min on a quiet machine: 3 JMH forks, 5 + 5 iterations, 3 lateness rounds
#
# Keep the machine otherwise idle: the runner waits for quiet and repeats disturbed measurements, but on two
# cores anything else running skews the numbers.
set -euo pipefail
mode="${1:-quick}"
case "$mode" in quick|full) ;; *) echo "usage: $0 [quick|full]" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."

mvn -B -q -pl benchmarks -am package -DskipTests

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
changed=$(git status --porcelain -- rpc-timer 2>/dev/null | wc -l | tr -d ' ')
if [ "$changed" = "0" ]; then dirty="no"; else dirty="yes, $changed files"; fi

mkdir -p benchmarks/results
java -Xmx1g -Djava.awt.headless=true -Dbench.gitCommit="$commit" -Dbench.rpcTimerDirty="$dirty" \
    -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.timer.TimerBenchRunner "$mode" benchmarks/results \
    2>&1 | tee "benchmarks/results/timer-$mode.log"
