#!/usr/bin/env bash
# Runs rpc-timer's benchmarks against the peers and writes the results to benchmarks/results/:
#   timer-<mode>.{json,md,png,log}     the wheel against Netty, Dubbo, Kafka, the JDK scheduler and Agrona (JMH)
#   failback-<mode>.{json,md,png,log}  Dubbo's failback cluster against wheelfailback, end to end over real Dubbo RPC
#
#   benchmarks/run.sh quick            # both parts, short: about 7 min on a quiet 2-core machine
#   benchmarks/run.sh full             # both parts, as published in BENCHMARKS.md: about 25 min
#   benchmarks/run.sh quick|full timer|failback   # one part only
#
# Keep the machine otherwise idle: the timer runner waits for quiet and repeats disturbed measurements, but on two
# cores anything else running skews the numbers.
set -euo pipefail
mode="${1:-quick}"
part="${2:-all}"
case "$mode" in quick|full) ;; *) echo "usage: $0 [quick|full] [all|timer|failback]" >&2; exit 2 ;; esac
case "$part" in all|timer|failback) ;; *) echo "usage: $0 [quick|full] [all|timer|failback]" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."

mvn -B -q -pl benchmarks -am package -DskipTests

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
changed=$(git status --porcelain -- rpc-timer 2>/dev/null | wc -l | tr -d ' ')
if [ "$changed" = "0" ]; then dirty="no"; else dirty="yes, $changed files"; fi

mkdir -p benchmarks/results
status=0
if [ "$part" != failback ]; then
    java -Xmx1g -Djava.awt.headless=true -Dbench.gitCommit="$commit" -Dbench.rpcTimerDirty="$dirty" \
        -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.timer.TimerBenchRunner "$mode" benchmarks/results \
        2>&1 | tee "benchmarks/results/timer-$mode.log" || status=1
fi
if [ "$part" != timer ]; then
    # Dubbo's, ZooKeeper's and rpc-timer's own log lines go to benchmarks/results/failback-<mode>.log
    java -Xmx1g -Djava.awt.headless=true -Dbench.gitCommit="$commit" -Dbench.rpcTimerDirty="$dirty" \
        -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.failback.FailbackComparison "$mode" benchmarks/results \
        || status=1
fi
exit $status
