#!/usr/bin/env bash
# Runs rpc-timer's benchmarks against the peers and writes the results to benchmarks/results/<part>/:
#   timer/timer-<mode>[-jdkN].{json,md,png,log}  the wheel against Netty, Dubbo, Kafka, the JDK scheduler and Agrona
#   failback/failback-<mode>.{json,md,png,log}   Dubbo's failback cluster against wheelfailback under faults, real RPC
#   happypath/happypath-<mode>.{json,md,log}     failover, failback, wheelfailback, wheelfailback+timeoutcheck on calls
#                                          that succeed: throughput (median and spread of rounds), p50/p99/p99.9,
#                                          process CPU per call; rounds a multiple of the 4 configurations, each
#                                          configuration in each position equally often (quick 4, full 8 rounds)
#   happypath/callcost-<mode>-jvm-NN.txt, callcost-<mode>-pooled.md
#                                          thread CPU and bytes per successful call (CallCost), sync and async:
#                                          failover, failback, failback with an attachment shaped like a retry.id,
#                                          a second failback (the A/A control), wheelfailback,
#                                          wheelfailback+timeoutcheck, taking turns every 2,000 calls, in 16 JVMs
#                                          (quick: 4), each creating them in another order; then the JVMs pooled
#                                          (CallCostPool); full about 58 min
#   happypath/callcost-<mode>-groups-jvm-NN.txt, callcost-<mode>-groups-pooled.md   (callcost --groups)
#                                          async only, without timeoutcheck: where wheelfailback's extra CPU goes,
#                                          each thread group's share of each pair's difference; full about 19 min
#   massfailure/massfailure-<mode>[-<label>].{json,md,log}  N calls while every provider fails, then recovery:
#                                          failback and wheelfailback
#   durable/durable-<mode>.{json,md,log}   the durable path against db-scheduler on one embedded PostgreSQL: calls due at
#                                          once drained by 1, 2 and 4 instances (JVMs) of each, rounds alternating;
#                                          calls/s, transactions and CPU per call (docs/benchmarks/durable-path.md)
#   million/million-<mode>.{json,md,log}   1,000,000 calls spilled past failbacktasks (embedded H2, then PostgreSQL):
#                                          heap, file size, claims at restart, delivery at the budget's rate
#                                          (docs/benchmarks/million-spilled.md)
#
#   benchmarks/run.sh quick [all]          # every part, short: about 18 min on a quiet 2-core machine
#   benchmarks/run.sh full [all]           # every part, as published in docs/benchmarks.md: about 45 min
#   benchmarks/run.sh quick|full timer|failback|happypath|callcost|massfailure|durable|million    # one part only
#                                          # (callcost, durable and million are not part of "all": run them on
#                                          # their own)
#   benchmarks/run.sh full timer --jdk /usr/lib/jvm/temurin-25-jdk-amd64 # the timer part on another JDK: its JMH
#                                          # forks and harness JVMs run on it too; files timer/timer-full-jdk25.*
#   benchmarks/run.sh full timer --cases scheduleCancel [--forks 8]
#                                          # some timer cases only (scheduleCancel,fireAll,memory,lateness,idleCpu),
#                                          # and other JMH forks than the mode's (full: 5)
#   benchmarks/run.sh full callcost --groups # the thread groups' shares (files callcost-<mode>-groups-*)
#   benchmarks/run.sh full massfailure --label journal --param key=value [--param ...]
#                                          # extra consumer reference parameters (a durable store, a retry budget)
#                                          # for the mass-failure runs; files massfailure/massfailure-full-<label>.*;
#                                          # --clusters wheelfailback skips Dubbo's failback
#   java -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.happypath.HappyPathPool <out base> <json>...
#                                          # pools the rounds of several happypath runs of the same code and judges
#                                          # the targets on all of them, each with its 95% bootstrap interval
#
# Approximate durations on a quiet 2-core machine (quick / full): timer 7 / 32 min (its case 1 alone: 4 / 26) (the same on --jdk),
# failback 2 / 3 min, happypath 7 / 15 min, callcost 15 / 58 min (--groups 3 / 19), massfailure 2 / 5 min (at most 12: recovery waits up to 5 min a cluster),
# durable 2 / 11 min, million 4 / 11 min.
#
# Keep the machine otherwise idle: the timer runner waits for quiet and repeats disturbed measurements, the others
# record how much CPU other processes used, but on two cores anything else running skews the numbers.
set -euo pipefail
usage="usage: $0 [quick|full] [all|timer|failback|happypath|callcost|massfailure|durable|million] [--jdk <java home>] [--cases list] [--forks n] [--groups] [--label name] [--clusters list] [--param key=value]..."
mode="${1:-quick}"
part="${2:-all}"
shift $(( $# < 2 ? $# : 2 ))
case "$mode" in quick|full) ;; *) echo "$usage" >&2; exit 2 ;; esac
case "$part" in all|timer|failback|happypath|callcost|massfailure|durable|million) ;; *) echo "$usage" >&2; exit 2 ;; esac
java=java
jvm_label=""
timer_props=()
mf_label=""
cc_groups=""
params=()
while [ $# -gt 0 ]; do
    case "$1" in
        --jdk)
            [ $# -ge 2 ] && [ -x "$2/bin/java" ] || { echo "--jdk: '${2:-}' (expected: a JDK home with bin/java)" >&2; exit 2; }
            [ "$part" = timer ] || { echo "--jdk: applies to the timer part only (got part '$part')" >&2; exit 2; }
            java="$2/bin/java"
            feature=$("$java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
            jvm_label="jdk$feature"
            shift 2 ;;
        --cases)
            [[ "${2:-}" =~ ^[A-Za-z,]+$ ]] || { echo "--cases: '${2:-}' (expected: a comma-separated list of timer cases)" >&2; exit 2; }
            [ "$part" = timer ] || { echo "--cases: applies to the timer part only (got part '$part')" >&2; exit 2; }
            timer_props+=("-Dbench.cases=$2")
            shift 2 ;;
        --forks)
            [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "--forks: '${2:-}' (expected: a number > 0)" >&2; exit 2; }
            [ "$part" = timer ] || { echo "--forks: applies to the timer part only (got part '$part')" >&2; exit 2; }
            timer_props+=("-Dbench.forks=$2")
            shift 2 ;;
        --label)
            [ $# -ge 2 ] || { echo "--label: missing (expected: a name for the result files)" >&2; exit 2; }
            [ "$part" = massfailure ] || { echo "--label: applies to massfailure only" >&2; exit 2; }
            params+=(--label "$2")
            mf_label="-$2"
            shift 2 ;;
        --clusters)
            [ $# -ge 2 ] || { echo "--clusters: missing (expected: failback,wheelfailback or one of them)" >&2; exit 2; }
            [ "$part" = massfailure ] || { echo "--clusters: applies to massfailure only" >&2; exit 2; }
            params+=(--clusters "$2")
            shift 2 ;;
        --groups)
            [ "$part" = callcost ] || { echo "--groups: applies to callcost only (got part '$part')" >&2; exit 2; }
            cc_groups=1
            shift ;;
        --param)
            [ $# -ge 2 ] && [[ "$2" == ?*=* ]] || { echo "--param: '${2:-}' (expected: key=value)" >&2; exit 2; }
            [ "$part" = massfailure ] || [ "$part" = all ] || { echo "--param: applies to massfailure only" >&2; exit 2; }
            params+=(--param "$2")
            shift 2 ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
cd "$(dirname "$0")/.."

mvn -B -q -pl benchmarks -am package -DskipTests

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
changed=$(git status --porcelain -- rpc-timer 2>/dev/null | wc -l | tr -d ' ')
if [ "$changed" = "0" ]; then dirty="no"; else dirty="yes, $changed files"; fi
props=(-Djava.awt.headless=true -Dbench.gitCommit="$commit" -Dbench.rpcTimerDirty="$dirty")
jar=benchmarks/target/benchmarks.jar
out=benchmarks/results

status=0
wants() {
    [ "$part" = "$1" ] || { [ "$part" = all ] && [ "$1" != callcost ] && [ "$1" != durable ] && [ "$1" != million ]; }
}
if wants timer; then
    suffix=${jvm_label:+-$jvm_label}
    for p in ${timer_props[@]+"${timer_props[@]}"}; do
        case "$p" in -Dbench.cases=*) suffix="$suffix-${p#-Dbench.cases=}"; suffix=${suffix//,/+} ;; esac
    done
    mkdir -p "$out/timer"
    # BENCH_JMH_HEAP replaces every JMH fork's heap flags (default: -Xms4g -Xmx4g -XX:+AlwaysPreTouch)
    "$java" -Xmx1g "${props[@]}" ${timer_props[@]+"${timer_props[@]}"} -Dbench.jvmLabel="$jvm_label" \
        ${BENCH_JMH_HEAP:+"-Dbench.jmhHeap=$BENCH_JMH_HEAP"} \
        -cp "$jar" io.rpctimer.bench.timer.TimerBenchRunner "$mode" "$out/timer" \
        2>&1 | tee "$out/timer/timer-$mode$suffix.log" || status=1
fi
if wants failback; then
    # Dubbo's, ZooKeeper's and rpc-timer's own log lines go to benchmarks/results/failback/failback-<mode>.log
    mkdir -p "$out/failback"
    "$java" -Xmx1g "${props[@]}" -cp "$jar" io.rpctimer.bench.failback.FailbackComparison "$mode" "$out/failback" \
        || status=1
fi
if wants happypath; then
    mkdir -p "$out/happypath"
    "$java" -Xms2g -Xmx2g "${props[@]}" -cp "$jar" io.rpctimer.bench.happypath.HappyPathComparison "$mode" \
        "$out/happypath" 2> "$out/happypath/happypath-$mode.log" || status=1
fi
if wants callcost; then
    # JVM j creates (and first runs) the n configurations rotated by j, reversed in every other group of n, so that
    # over 2n JVMs each is created in each position twice; within a round the configurations take turns every 2,000
    # calls; one JVM's rounds are not assumed independent, so the pool resamples JVMs, then rounds
    mkdir -p "$out/happypath"
    if [ "$mode" = full ]; then jvms=16; rounds=7; else jvms=4; rounds=4; fi
    if [ -n "$cc_groups" ]; then
        # where an async call's extra CPU goes: every thread group's share of each pair's difference (CallCostGroups)
        configs=(FAILBACK WHEEL FAILBACK@retry.id FAILBACK+twin=1 FAILOVER); modes=async; extra=(--groups 1); label=-groups
    else
        configs=(FAILOVER FAILBACK FAILBACK@retry.id FAILBACK+twin=1 WHEEL WHEEL_TIMEOUTCHECK); modes=sync,async
        extra=(); label=""
    fi
    n=${#configs[@]}
    files=()
    : > "$out/happypath/callcost-$mode$label.log"
    for ((j = 0; j < jvms; j++)); do
        order=()
        for ((i = 0; i < n; i++)); do
            if (( (j / n) % 2 == 1 )); then k=$(( n - 1 - i )); else k=$i; fi
            order+=("${configs[$(( (k + j) % n ))]}")
        done
        f=$(printf '%s/happypath/callcost-%s%s-jvm-%02d.txt' "$out" "$mode" "$label" $((j + 1)))
        files+=("$f")
        "$java" -Xms2g -Xmx2g "${props[@]}" -Drpctimer.failback.store=memory -cp "$jar" \
            io.rpctimer.bench.happypath.CallCost --configs "$(IFS=,; echo "${order[*]}")" --modes "$modes" \
            --rounds "$rounds" --first 3 --calls 30000 --warmup 30000 --slice 2000 --threads 8 --outstanding 64 \
            ${extra[@]+"${extra[@]}"} > "$f" 2>> "$out/happypath/callcost-$mode$label.log" || status=1
    done
    "$java" -cp "$jar" io.rpctimer.bench.happypath.CallCostPool 3 "${files[@]}" \
        > "$out/happypath/callcost-$mode$label-pooled.md" || status=1
fi
if wants massfailure; then
    # the providers' injected errors are logged once per call: Dubbo's log lines go to massfailure-<mode>.log
    mkdir -p "$out/massfailure"
    "$java" -Xms2g -Xmx2g "${props[@]}" -cp "$jar" io.rpctimer.bench.massfailure.MassFailureComparison "$mode" \
        "$out/massfailure" ${params[@]+"${params[@]}"} 2> "$out/massfailure/massfailure-$mode$mf_label.log" \
        || status=1
fi
if wants durable; then
    # the workers' log lines go to durable-<mode>.log; the tables are also spliced into the doc page
    mkdir -p "$out/durable"
    "$java" -Xmx1g "${props[@]}" -cp "$jar" io.rpctimer.bench.durable.DurableComparison "$mode" "$out/durable" \
        > "$out/durable/durable-$mode.md" 2> "$out/durable/durable-$mode.log" || status=1
    if [ "$mode" = full ]; then
        "$java" -cp "$jar" io.rpctimer.bench.durable.DurableReport "$out/durable/durable-full.json" \
            --doc docs/benchmarks/durable-path.md > /dev/null || status=1
    fi
fi
if wants million; then
    mkdir -p "$out/million"
    "$java" -Xmx1g "${props[@]}" -cp "$jar" io.rpctimer.bench.million.MillionSpill "$mode" "$out/million" \
        > "$out/million/million-$mode.md" 2> "$out/million/million-$mode.log" || status=1
    if [ "$mode" = full ]; then
        "$java" -cp "$jar" io.rpctimer.bench.million.MillionReport "$out/million/million-full.json" \
            --doc docs/benchmarks/million-spilled.md > /dev/null || status=1
    fi
fi
exit $status
