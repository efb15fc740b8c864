#!/usr/bin/env bash
# The Dubbo compatibility matrix (docs/compatibility.md): rpc-timer's jar, built once against the baseline Dubbo
# (3.3.6), and its integration tests over real RPC run against each supported Dubbo line; on the unsupported lines
# its extensions must fail with one clear message. One Maven run per cell; prints a table and a closing count.
#
#   dubbo-matrix/matrix.sh                  every cell: 3.1 3.2 3.3 3.3@25 3.0 2.7
#   dubbo-matrix/matrix.sh 3.1 3.2 3.3@25   some cells: LINE on JDK 17, or LINE@25 on Temurin 25
set -euo pipefail
cd "$(dirname "$0")/.."
JDK25_HOME=${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
cells=("$@")
if [ ${#cells[@]} -eq 0 ]; then
  cells=(3.1 3.2 3.3 3.3@25 3.0 2.7)
fi
logs=dubbo-matrix/target/matrix-logs
mkdir -p "$logs"
rows=()
passed=0
# a count from failsafe's summary of the cell that just ran
field() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$summary"; }
failed=0
for cell in "${cells[@]}"; do
  line=${cell%@*}
  jdk=17
  jvm=()
  if [[ $cell == *@25 ]]; then
    jdk=25
    jvm=(-Djvm="$JDK25_HOME/bin/java")
  fi
  log="$logs/$cell.log"
  summary=dubbo-matrix/target/failsafe-reports/failsafe-summary.xml
  rm -f "$summary"
  echo "== Dubbo $line on JDK $jdk: mvn -B -pl dubbo-matrix -am verify -Pdubbo-$line ${jvm[*]}"
  start=$(date +%s)
  set +e
  mvn -B -pl dubbo-matrix -am verify "-Pdubbo-$line" "${jvm[@]}" > "$log" 2>&1
  rc=$?
  set -e
  seconds=$(( $(date +%s) - start ))
  grep -E "Tests run:|BUILD|ERROR\]" "$log" | grep -v "^\[INFO\] Tests run: .* -- in " || true
  run=0; bad=0; skipped=0
  if [ -f "$summary" ]; then
    run=$(field completed)
    bad=$(( $(field errors) + $(field failures) ))
    skipped=$(field skipped)
  fi
  ok=$(( run - bad - skipped ))
  if [ $rc -ne 0 ]; then
    failed=$(( failed + (bad > 0 ? bad : 1) ))
    verdict="FAILED (exit $rc, log $log)"
  else
    verdict=ok
  fi
  passed=$(( passed + ok ))
  rows+=("| $line | $jdk | $run | $ok | $skipped | $bad | ${seconds}s | $verdict |")
done
echo
echo "| Dubbo | JDK | tests run | passed | skipped | failed | time | result |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "matrix: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
