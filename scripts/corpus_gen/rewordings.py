"""What teams call and write in place of the generator's words, per alert kind: the
"paraphrase" and "paraphrase_rewritten" cases of cases.py are built from these.

`REWORDED` is a second phrasing of each kind's summary and description with the same slots
(kinds.py, infra_kinds.py), so a rewritten alert states the same facts as the runbook's
alert but shares few of its words. `RENAMED` holds endings for a team's own alert names
(`<Subject><Ending>`, e.g. `CheckoutKeepsFailing`); none of them is a kind key, so a renamed
alert never carries the name of any runbook.

Changing these changes the cases, never the corpus.
"""

from __future__ import annotations

#: Kind key -> (summary, description), slots as in the kind's own templates.
REWORDED: dict[str, tuple[str, str]] = {
    "HighErrorRate": (
        "{Name} answers with server errors on {pct}% of calls",
        "Over the past {win} minutes, above {thr}% of the calls that reached {deploy} ended "
        "in a 5xx status."),
    "HighLatencyP99": (
        "Slowest 1% of {Name} requests take {ms} ms",
        "For {win} minutes the tail of {deploy} response times (99th percentile) has stayed "
        "over {thr_ms} ms."),
    "UpstreamTimeouts": (
        "{pct}% of {Name} calls to {dep} hit their deadline",
        "{deploy} gives up waiting for {dep} after {thr_ms} ms on a growing share of its "
        "outbound calls."),
    "ConnectionPoolExhausted": (
        "{Name} has used {pct}% of its database connections",
        "No free connection is left among the {pool} that {deploy} may open; work waits "
        "until one is handed back."),
    "SLOBurnRateFast": (
        "{Name} spends error budget at {burn} times the sustainable pace",
        "Both the 5-minute and the 1-hour windows of the {Name} availability objective use "
        "up budget more than {burn} times faster than allowed."),
    "PodCrashLooping": (
        "{Name} pod died and came back {restarts} times within 15 minutes",
        "One container in {deploy} exits over and over, and the kubelet waits longer before "
        "each new start."),
    "ContainerOOMKilled": (
        "{Name} container ran out of memory at its {mem}Mi cap",
        "The kernel killed a {deploy} container after it grew past the {mem}Mi of memory it "
        "is allowed."),
    "DeploymentReplicasMismatch": (
        "Only {ready} of {replicas} {Name} pods are available",
        "For {win} minutes {deploy} has run with fewer usable pods than its deployment asks "
        "for."),
    "CPUThrottlingHigh": (
        "{Name} held back by its CPU limit in {pct}% of periods",
        "The CFS quota keeps {deploy} containers off the CPU in {pct}% of scheduling "
        "periods."),
    "CertificateExpiringSoon": (
        "TLS cert on {host} runs out in {days} days",
        "Nobody renewed the certificate that {host} presents, and it stops being valid in "
        "{days} days."),
    "ReadinessProbeFailing": (
        "{count} {Name} pods report not ready",
        "Pods of {deploy} fail their readiness check and are taken out of the load "
        "balancer."),
    "TrafficDrop": (
        "{Name} gets {pct}% fewer requests than a week ago",
        "Incoming request volume at {deploy} sits {pct}% under what it was at this hour seven "
        "days ago."),
    "HPAMaxedOut": (
        "{Name} autoscaler cannot add pods beyond {replicas}",
        "The horizontal autoscaler for {deploy} has already reached its ceiling of "
        "{replicas} pods."),
    "ImagePullBackOff": (
        "{Name} pods fail to download their container image",
        "Fresh {deploy} pods cannot fetch their image from the registry and keep backing "
        "off."),
    "QueueBacklog": (
        "{backlog} messages wait for {Name}",
        "{deploy} is not keeping up with {queue}: {backlog} messages are queued and the "
        "number keeps rising."),
    "JobFailureRate": (
        "{pct}% of {Name} jobs end in error",
        "In the last {win} minutes {pct}% of the jobs run by {deploy} did not finish "
        "successfully."),
    "DeadLetterQueueGrowing": (
        "{backlog} rejected messages sit in the {Name} dead-letter queue",
        "{deploy} keeps giving up on messages, and they accumulate in {queue}.dlq."),
    "CronJobMissedSchedule": (
        "{Name} has not finished a run in {hours}h",
        "No run of the {deploy} CronJob has succeeded during the past {hours} hours."),
    "JobDurationHigh": (
        "{Name} job still busy after {hours}h",
        "One {deploy} job has been going for {hours} hours, much longer than it normally "
        "takes."),
    "ConsumerStalled": (
        "{Name} has acknowledged nothing for {win} minutes",
        "{deploy} pods are up, yet not a single message was acked during the last {win} "
        "minutes."),
    "ReplicationLag": (
        "{replica} trails the primary by {lag}s",
        "The standby {replica} replays WAL more than {lag} seconds after the primary wrote "
        "it."),
    "TooManyConnections": (
        "{Name} has {pct}% of its connection slots taken",
        "Clients hold above {pct}% of the {maxconn} connections that {db} accepts."),
    "LongRunningTransactions": (
        "A {db} transaction has stayed open {minutes} minutes",
        "Some session on {db} began a transaction over {minutes} minutes ago and has neither "
        "committed nor rolled back."),
    "DeadlocksDetected": (
        "{db} aborts {count} deadlocked transactions a minute",
        "Transactions on {db} wait on each other's locks in a cycle, and Postgres cancels one "
        "side each time."),
    "DiskSpaceLow": (
        "{Name} data disk is {pct}% used",
        "At its current growth the {db} data volume, now {pct}% used, runs out of room in "
        "roughly {hours} hours."),
    "BackupFailed": (
        "{db} has had no good backup for {hours}h",
        "The scheduled nightly backup of {db} errored or never started."),
    "MemoryHigh": (
        "{Name} has used {pct}% of its memory",
        "{db} sits at {pct}% of the memory it may take."),
    "EvictionsSpike": (
        "{Name} is dropping {rate} keys per second",
        "{db} hit its maxmemory setting and throws keys out to make room."),
    "ReplicationBroken": (
        "{Name} replica is cut off from its master",
        "One {db} replica says its link to the master is down."),
    "BrokerDown": (
        "Kafka broker {db}-{count} has gone missing",
        "{db} runs one broker short: it dropped out of the cluster."),
    "ConsumerLagHigh": (
        "{group} is {backlog} messages behind",
        "Consumers in {group} read {topic} {backlog} messages behind the newest offset."),
    "UnderReplicatedPartitions": (
        "{count} partitions lack in-sync copies",
        "On {count} partitions fewer replicas are in sync than the replication factor asks "
        "for."),
    "ClusterRed": (
        "{Name} search cluster health went red",
        "{db} has a primary shard that no node holds."),
    "NodeNotReady": (
        "{node} has not been Ready for {win} minutes",
        "The kubelet on {node} no longer reports the node as Ready."),
    "DNSResolutionFailures": (
        "{pct}% of name lookups in the cluster fail",
        "CoreDNS returns SERVFAIL or no answer at all for {pct}% of the queries it gets."),
}

#: Kind key -> endings of the names teams give such an alert.
RENAMED: dict[str, tuple[str, ...]] = {
    "HighErrorRate": ("KeepsFailing", "ServerErrorsUp", "Returning5xx"),
    "HighLatencyP99": ("SlowResponses", "TailLatencyBad", "RequestsSluggish"),
    "UpstreamTimeouts": ("DependencyCallsHanging", "UpstreamSlowToAnswer", "OutboundDeadlines"),
    "ConnectionPoolExhausted": ("OutOfDbConnections", "PoolSaturated", "WaitingForConnections"),
    "SLOBurnRateFast": ("ErrorBudgetDraining", "BudgetBurningFast", "AvailabilityAtRisk"),
    "PodCrashLooping": ("KeepsRestarting", "PodsDying", "RestartLoop"),
    "ContainerOOMKilled": ("OutOfMemory", "MemoryLimitKills", "KilledForMemory"),
    "DeploymentReplicasMismatch": ("NotEnoughPods", "RolloutStuck", "MissingReplicas"),
    "CPUThrottlingHigh": ("CpuCapped", "StarvedOfCpu", "CpuQuotaHit"),
    "CertificateExpiringSoon": ("TlsCertAboutToLapse", "CertRenewalOverdue", "HttpsCertExpiry"),
    "ReadinessProbeFailing": ("PodsNotServing", "HealthCheckRed", "UnreadyPods"),
    "TrafficDrop": ("RequestsVanished", "TrafficFellOff", "FewerCallsThanUsual"),
    "HPAMaxedOut": ("AutoscalingCeiling", "NoRoomToScale", "ScaledToLimit"),
    "ImagePullBackOff": ("CannotFetchImage", "RegistryPullErrors", "ImageNotFound"),
    "QueueBacklog": ("WorkPilingUp", "QueueTooDeep", "BacklogClimbing"),
    "JobFailureRate": ("JobsErroring", "TasksFailing", "BatchFailures"),
    "DeadLetterQueueGrowing": ("PoisonMessagesPiling", "RejectedMessagesUp", "DlqFilling"),
    "CronJobMissedSchedule": ("NightlyRunMissing", "ScheduleSkipped", "NoRecentRun"),
    "JobDurationHigh": ("JobStuckRunning", "RunTakingForever", "JobOverrunning"),
    "ConsumerStalled": ("ConsumersFrozen", "NothingConsumed", "ProcessingHalted"),
    "ReplicationLag": ("ReplicaBehind", "StandbyFallingBehind", "StaleReadReplica"),
    "TooManyConnections": ("ConnectionLimitNear", "DbClientsMaxedOut", "ConnectionSlotsLow"),
    "LongRunningTransactions": ("TxOpenTooLong", "StuckTransaction", "IdleTxBlockingVacuum"),
    "DeadlocksDetected": ("LockConflicts", "TransactionsDeadlocking", "LockCycleAborts"),
    "DiskSpaceLow": ("VolumeFillingUp", "StorageNearlyFull", "DataDiskRunningOut"),
    "BackupFailed": ("NoFreshBackup", "SnapshotJobBroken", "BackupsMissing"),
    "MemoryHigh": ("CacheMemoryTight", "NearMemoryCeiling", "RamAlmostFull"),
    "EvictionsSpike": ("KeysBeingDropped", "CacheEvictingHard", "CacheChurn"),
    "ReplicationBroken": ("ReplicaDetached", "FollowerLostLeader", "MasterLinkLost"),
    "BrokerDown": ("KafkaNodeGone", "BrokerUnreachable", "BrokerMissing"),
    "ConsumerLagHigh": ("EventsProcessedLate", "ConsumersBehind", "OffsetsTrailing"),
    "UnderReplicatedPartitions": ("IsrShrunk", "ReplicasOutOfSync", "PartitionsAtRisk"),
    "ClusterRed": ("SearchClusterUnhealthy", "ShardsUnassigned", "IndexHealthRed"),
    "NodeNotReady": ("WorkerNodeUnhealthy", "KubeletSilent", "HostDroppedOut"),
    "DNSResolutionFailures": ("NameLookupsFailing", "ResolverErrors", "CorednsServfail"),
}
