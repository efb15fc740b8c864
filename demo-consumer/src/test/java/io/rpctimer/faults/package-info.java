/**
 * The fault-injection suite: {@code wheelfailback} over real Dubbo RPC on 127.0.0.1 and a real ZooKeeper
 * (Curator's {@code TestingServer} / {@code TestingCluster}), with two or three demo providers whose faults change
 * while calls are in flight. Each {@code *FaultIT} scenario ends with the same accounting ({@link
 * io.rpctimer.faults.Accounting}) and records its figures in {@code demo-consumer/target/reliability/*.json};
 * {@link io.rpctimer.faults.ReliabilityReport} turns them into {@code docs/reliability.md} and
 * {@code docs/reliability-processes.md}.
 *
 * <p>Run the suite and regenerate the pages, from the repository root:
 * <pre>
 * mvn -B -pl demo-consumer -am clean verify -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test='io.rpctimer.faults.*IT' -Dfailsafe.failIfNoSpecifiedTests=false; \
 * java demo-consumer/src/test/java/io/rpctimer/faults/ReliabilityReport.java demo-consumer/target/reliability docs
 * </pre>
 * The suite also runs with every other IT in {@code mvn -B verify}. A scenario takes from a few seconds to about a
 * minute (those with consumer processes and PostgreSQL take longest), most of it starting and stopping Dubbo nodes
 * (one JVM per test class).
 */
package io.rpctimer.faults;
