"""Synthetic runbooks for the benchmarks: deterministic, varied, and shaped like real ones.

Each runbook is `<service>/<AlertName>.md` with Symptoms, Impact, Diagnosis (fenced
commands), Mitigation (sub-sections), Escalation and a tail of past incidents, 300-1000
words, and YAML front matter on most of them. The text is filled from per-alert-kind
templates plus combinatorial pools, so neighbouring runbooks share vocabulary the way real
ones do (hard negatives for search) without being copies of each other.

Runbook `i` depends only on the seed and `i`: `runbooks(2000)` starts with `runbooks(1000)`,
so a larger corpus contains every smaller one and the benchmarks can reuse cached indexes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

__all__ = ["GENERATOR_VERSION", "Runbook", "runbooks", "write_corpus"]

#: Bump when the generated text changes, so cached benchmark indexes are rebuilt.
GENERATOR_VERSION = 1
MIN_WORDS = 300
MAX_WORDS = 1000


@dataclass(frozen=True)
class Kind:
    """One kind of alert and the runbook text that goes with it. `{...}` are slots."""

    key: str
    types: tuple[str, ...]
    title: str
    summary: str
    description: str
    symptoms: tuple[str, ...]
    impact: str
    diagnosis: tuple[tuple[str, str], ...]
    mitigation: tuple[tuple[str, str, str], ...]


_K8S_DIAG = (
    ("Look at the pods and their recent events:",
     "kubectl get pods -n {ns} -l app={deploy} -o wide\n"
     "kubectl get events -n {ns} --sort-by=.lastTimestamp | tail -20"),
    ("Compare with the last rollout:", "kubectl rollout history deploy/{deploy} -n {ns} | tail -3"),
)
_ROLLBACK = ("Roll back", "If it started with a release, roll back first and debug later.",
             "kubectl rollout undo deploy/{deploy} -n {ns}")
_SCALE = ("Scale out", "Add replicas to buy time while the cause is found.",
          "kubectl scale deploy/{deploy} -n {ns} --replicas={replicas}")

KINDS: tuple[Kind, ...] = (
    Kind("HighErrorRate", ("http",), "{Name} high 5xx error rate",
         "{Name} returns {pct}% 5xx responses",
         "More than {thr}% of requests to {deploy} failed with 5xx over the last {win} minutes.",
         ("Error ratio on the {Name} dashboard above {thr}% for several minutes.",
          "Clients log `502 Bad Gateway` or `503 Service Unavailable` from {deploy}.",
          "Errors are often concentrated on one route or one upstream dependency."),
         "Failed requests for users of {Name}; the availability SLO burns fast.",
         (("Break the errors down by route and status code:",
           "curl -sG {prom}/api/v1/query --data-urlencode \\\n"
           "  'query=sum by (route, code) "
           "(rate(http_requests_total{{app=\"{deploy}\",code=~\"5..\"}}[5m]))'"),
          ("Read the application logs for stack traces:",
           "kubectl logs -n {ns} deploy/{deploy} --since=15m "
           "| grep -iE 'error|exception' | tail -50"),
          *_K8S_DIAG),
         (_ROLLBACK,
          ("Failing dependency", "If one upstream fails, follow its runbook and enable the "
           "fallback flag `{svc}.degraded_mode=true`.", ""),
          _SCALE)),
    Kind("HighLatencyP99", ("http",), "{Name} p99 latency above SLO",
         "{Name} p99 latency is {ms} ms",
         "The 99th percentile latency of {deploy} has been above {thr_ms} ms for {win} minutes.",
         ("Slow pages and mobile timeouts reported for {Name}.",
          "p50 is usually fine; only the tail is slow, pointing at a slow dependency or GC.",
          "Request queueing visible as rising in-flight requests per pod."),
         "Users wait; some clients time out and retry, adding load.",
         (("Find the slow routes:",
           "curl -sG {prom}/api/v1/query --data-urlencode \\\n"
           "  'query=histogram_quantile(0.99, sum by (le, route) "
           "(rate(http_request_duration_seconds_bucket{{app=\"{deploy}\"}}[5m])))'"),
          ("Check CPU throttling and GC pauses of the pods:",
           "kubectl top pods -n {ns} -l app={deploy}"),
          *_K8S_DIAG),
         (_SCALE, ("Slow database", "If traces show slow queries, see the database runbook for "
                   "long-running queries and kill the offenders.", ""), _ROLLBACK)),
    Kind("UpstreamTimeouts", ("http",), "{Name} upstream timeouts",
         "{Name} sees {pct}% timeouts to {dep}",
         "Calls from {deploy} to {dep} time out (deadline {thr_ms} ms).",
         ("`context deadline exceeded` errors in the {Name} logs.",
          "Retries double the request rate towards {dep}."),
         "Requests that need {dep} fail or are served degraded.",
         (("Check the dependency's own latency and error dashboards first.",
           "kubectl get pods -n {dep} -o wide"),
          ("Count timeouts per upstream host:",
           "kubectl logs -n {ns} deploy/{deploy} --since=10m | grep -c 'deadline exceeded'")),
         (("Shed retries", "Lower the client retry budget to stop the retry storm.",
           "kubectl set env deploy/{deploy} -n {ns} UPSTREAM_MAX_RETRIES=1"),
          ("Circuit breaker", "Open the circuit breaker so {Name} serves cached data.", ""))),
    Kind("ConnectionPoolExhausted", ("http", "worker"), "{Name} connection pool exhausted",
         "{Name} connection pool at {pct}% of max",
         "All {pool} database connections of {deploy} are in use; requests wait for one.",
         ("Requests block on `acquiring connection` for seconds.",
          "Pool usage graph flat at the maximum."),
         "Latency climbs and requests fail once the acquire timeout is hit.",
         (("Count connections held per pod:",
           "psql \"$DATABASE_URL\" -c \"select application_name, state, count(*) from "
           "pg_stat_activity group by 1, 2 order by 3 desc;\""),
          ("Look for long transactions holding connections:",
           "psql \"$DATABASE_URL\" -c \"select pid, now() - xact_start as age, query from "
           "pg_stat_activity where state <> 'idle' order by age desc limit 10;\"")),
         (("Kill idle-in-transaction sessions", "They are leaked connections; killing them "
           "frees the pool at once.",
           "psql \"$DATABASE_URL\" -c \"select pg_terminate_backend(pid) "
           "from pg_stat_activity where state = 'idle in transaction';\""), _ROLLBACK)),
    Kind("SLOBurnRateFast", ("http",), "{Name} fast SLO burn",
         "{Name} burns its error budget {burn}x too fast",
         "The 1h and 5m burn rates of the {Name} availability SLO both exceed {burn}.",
         ("Error budget dashboard shows a steep drop.",
          "Usually accompanied by a 5xx or latency alert for the same service."),
         "At this rate the monthly error budget is gone within hours.",
         (("Find which SLI burns:", "open {dash}"),
          *_K8S_DIAG),
         (_ROLLBACK, ("Freeze deploys", "Announce a deploy freeze in {chan} until the burn "
                      "rate is back under 1.", ""))),
    Kind("PodCrashLooping", ("http", "worker"), "{Name} pods crash looping",
         "{Name} pod restarted {restarts} times in 15 minutes",
         "A container of {deploy} keeps exiting and Kubernetes backs off restarting it.",
         ("Pods in `CrashLoopBackOff`, restart count climbing.",
          "Fewer ready replicas than desired."),
         "Reduced capacity; if every replica crashes, {Name} is down.",
         (("Read the logs of the previous (crashed) container:",
           "kubectl logs -n {ns} {pod} --previous | tail -50"),
          ("See why it exited (exit code, OOMKilled):",
           "kubectl describe pod -n {ns} {pod} | sed -n '/Last State/,/Ready/p'"),
          *_K8S_DIAG),
         (_ROLLBACK, ("Bad config", "If a ConfigMap or Secret changed, revert it and restart.",
                      "kubectl rollout restart deploy/{deploy} -n {ns}"))),
    Kind("ContainerOOMKilled", ("http", "worker"), "{Name} containers OOM killed",
         "{Name} container OOMKilled (limit {mem}Mi)",
         "A container of {deploy} exceeded its memory limit of {mem}Mi and was killed.",
         ("`OOMKilled` as the last termination reason.",
          "Memory graph saw-tooth up to the limit before each restart."),
         "Requests in flight on the killed pod fail; repeated kills look like a crash loop.",
         (("Confirm the reason:",
           "kubectl get pods -n {ns} -l app={deploy} -o "
           "jsonpath='{{range .items[*]}}{{.metadata.name}} "
           "{{.status.containerStatuses[0].lastState.terminated.reason}}{{\"\\n\"}}{{end}}'"),
          ("Compare usage with the limit:", "kubectl top pods -n {ns} -l app={deploy}")),
         (("Raise the limit", "A temporary bump buys time; file a ticket to find the leak.",
           "kubectl set resources deploy/{deploy} -n {ns} --limits=memory={mem2}Mi"),
          _ROLLBACK)),
    Kind("DeploymentReplicasMismatch", ("http", "worker"), "{Name} replicas unavailable",
         "{Name} has {ready}/{replicas} replicas ready",
         "Deployment {deploy} has had fewer available replicas than desired for {win} minutes.",
         ("Rollout stuck; new pods Pending or not Ready.",
          "`kubectl rollout status` never finishes."),
         "Less capacity than planned; a stuck rollout blocks further deploys.",
         (("Describe the pending pods for scheduling errors:",
           "kubectl get pods -n {ns} -l app={deploy} | grep -v Running\n"
           "kubectl describe pod -n {ns} {pod} | tail -20"),
          ("Check node capacity:", "kubectl describe nodes | grep -A5 'Allocated resources'")),
         (("Unstick the rollout", "Undo the rollout if new pods cannot start.",
           "kubectl rollout undo deploy/{deploy} -n {ns}"),
          ("Free capacity", "Ask the platform team to add nodes to the pool.", ""))),
    Kind("CPUThrottlingHigh", ("http", "worker"), "{Name} CPU throttling",
         "{Name} throttled {pct}% of CPU periods",
         "Containers of {deploy} are throttled by their CPU limit in {pct}% of periods.",
         ("Latency rises under load while CPU usage looks flat at the limit.",),
         "Slower requests and jobs; health checks may time out and restart pods.",
         (("Compare usage with requests and limits:",
           "kubectl top pods -n {ns} -l app={deploy}\n"
           "kubectl get deploy {deploy} -n {ns} -o jsonpath='{{..resources}}'"),),
         (("Raise the CPU limit", "Or remove it and keep the request; see the platform guide.",
           "kubectl set resources deploy/{deploy} -n {ns} --limits=cpu={cpu}m"), _SCALE)),
    Kind("CertificateExpiringSoon", ("http",), "{Name} TLS certificate expiring",
         "Certificate for {host} expires in {days} days",
         "The TLS certificate served by {host} expires in {days} days and was not renewed.",
         ("cert-manager `Certificate` not Ready.", "ACME challenge failures in the logs."),
         "When it expires every client fails the TLS handshake: a full outage.",
         (("Check the certificate and its last renewal:",
           "kubectl get certificate -n {ns}\nkubectl describe certificate -n {ns} {svc}-tls"),
          ("Verify what is served:",
           "echo | openssl s_client -connect {host}:443 -servername {host} 2>/dev/null "
           "| openssl x509 -noout -dates")),
         (("Force renewal", "Delete the secret so cert-manager issues a new certificate.",
           "kubectl delete secret -n {ns} {svc}-tls"),)),
    Kind("ReadinessProbeFailing", ("http",), "{Name} readiness probes failing",
         "{Name}: {count} pods not ready",
         "Readiness probes of {deploy} fail, so the pods receive no traffic.",
         ("Endpoints list shrinking.", "Probe failures (`HTTP probe failed with statuscode: 503`) "
          "in the pod events."),
         "Fewer pods serve the same traffic; if all fail, {Name} is unreachable.",
         (("Probe failures in the events:",
           "kubectl get events -n {ns} --field-selector reason=Unhealthy | tail -20"),
          ("Call the probe yourself:",
           "kubectl exec -n {ns} {pod} -- wget -qO- localhost:8080/readyz")),
         (("Dependency down", "A readiness probe that checks dependencies takes every pod out "
           "at once; fix the dependency or relax the probe.", ""), _ROLLBACK)),
    Kind("TrafficDrop", ("http",), "{Name} traffic dropped",
         "{Name} request rate down {pct}% week over week",
         "Requests to {deploy} are {pct}% below the same time last week.",
         ("Request rate graph falls off a cliff.", "No matching rise in errors."),
         "Users may not reach {Name} at all: DNS, CDN or a client release.",
         (("Compare with last week:",
           "curl -sG {prom}/api/v1/query --data-urlencode \\\n"
           "  'query=sum(rate(http_requests_total{{app=\"{deploy}\"}}[5m])) / "
           "sum(rate(http_requests_total{{app=\"{deploy}\"}}[5m] offset 1w))'"),
          ("Check DNS and the ingress:", "dig +short {host}\nkubectl get ingress -n {ns}")),
         (("Client release", "Ask the mobile team whether a release changed the API host.", ""),)),
    Kind("HPAMaxedOut", ("http", "worker"), "{Name} autoscaler at maximum",
         "{Name} HPA at max replicas ({replicas})",
         "The HorizontalPodAutoscaler of {deploy} runs at its maximum of {replicas} replicas.",
         ("CPU per pod stays above target although the HPA cannot add pods.",),
         "No headroom left: more load becomes latency and errors.",
         (("HPA state:",
           "kubectl get hpa -n {ns} {deploy}\nkubectl describe hpa -n {ns} {deploy}"),),
         (("Raise the maximum", "If nodes have room, raise maxReplicas.",
           "kubectl patch hpa {deploy} -n {ns} "
           "-p '{{\"spec\":{{\"maxReplicas\":{replicas2}}}}}'"),)),
    Kind("ImagePullBackOff", ("http", "worker"), "{Name} image pull failing",
         "{Name} pods cannot pull their image",
         "New pods of {deploy} stay in ImagePullBackOff.",
         ("Rollout stuck with pods in `ErrImagePull`.",),
         "The rollout cannot progress; scaling up is impossible until images pull.",
         (("Which image and why:",
           "kubectl describe pod -n {ns} {pod} | grep -A3 -i 'failed to pull'"),),
         (("Wrong tag", "Fix the tag in the deploy repository or roll back.", ""), _ROLLBACK)),
    Kind("QueueBacklog", ("worker",), "{Name} queue backlog growing",
         "{Name} backlog is {backlog} messages",
         "The {queue} queue consumed by {deploy} holds {backlog} messages and keeps growing.",
         ("Oldest message age above {win} minutes.", "Consumers busy at 100%."),
         "Work is delayed: {effect}.",
         (("Check consumer count and throughput:",
           "kubectl get pods -n {ns} -l app={deploy}\n"
           "rabbitmqctl list_queues name messages consumers | grep {queue}"),
          ("Look for poison messages retried forever:",
           "kubectl logs -n {ns} deploy/{deploy} --since=10m | grep -i retry | tail -20")),
         (_SCALE, ("Poison message", "Move the failing message to the dead-letter queue.", ""))),
    Kind("JobFailureRate", ("worker",), "{Name} jobs failing",
         "{Name} job failure rate {pct}%",
         "{pct}% of {deploy} jobs failed in the last {win} minutes.",
         ("Failed jobs counter rising.", "Same exception repeated in the logs."),
         "Work is not done: {effect}.",
         (("Group failures by error:",
           "kubectl logs -n {ns} deploy/{deploy} --since=30m | grep -i 'job failed' "
           "| sort | uniq -c | sort -rn | head"),
          *_K8S_DIAG),
         (_ROLLBACK, ("Retry failed jobs", "Once fixed, requeue the failed jobs.",
                      "./bin/{svc}-admin jobs retry --since {win}m"))),
    Kind("DeadLetterQueueGrowing", ("worker",), "{Name} dead-letter queue growing",
         "{Name} DLQ holds {backlog} messages",
         "Messages that {deploy} could not process pile up in {queue}.dlq.",
         ("DLQ depth rising.", "Consumers log validation or deserialization errors."),
         "Every message in the DLQ is work that will not happen without a replay.",
         (("Peek at a dead message:", "./bin/{svc}-admin dlq peek --queue {queue}.dlq --count 3"),),
         (("Replay", "After the fix is deployed, replay the DLQ.",
           "./bin/{svc}-admin dlq replay --queue {queue}.dlq"),)),
    Kind("CronJobMissedSchedule", ("worker",), "{Name} scheduled job did not run",
         "{Name} last success {hours}h ago",
         "The CronJob {deploy} has not completed successfully for {hours} hours.",
         ("No recent Job objects, or Jobs stuck Active.",),
         "{effect}.",
         (("List the recent jobs:", "kubectl get cronjob,jobs -n {ns} | grep {deploy}"),
          ("Check whether the CronJob is suspended:",
           "kubectl get cronjob {deploy} -n {ns} -o jsonpath='{{.spec.suspend}}'")),
         (("Run it by hand", "Trigger one run now.",
           "kubectl create job -n {ns} --from=cronjob/{deploy} {deploy}-manual-$(date +%s)"),)),
    Kind("JobDurationHigh", ("worker",), "{Name} jobs running too long",
         "{Name} job running for {hours}h",
         "A {deploy} job has been running for {hours} hours, far above its usual duration.",
         ("Job still Active long after its usual finish time.",),
         "Downstream consumers wait for its output: {effect}.",
         (("Is it progressing?", "kubectl logs -n {ns} job/{deploy} --since=10m | tail -20"),),
         (("Kill and rerun", "If it is stuck, delete the job and run it again.",
           "kubectl delete job -n {ns} {deploy}"),)),
    Kind("ConsumerStalled", ("worker",), "{Name} consumer stalled",
         "{Name} processed 0 messages in {win} minutes",
         "{deploy} is running but has not acknowledged a message for {win} minutes.",
         ("Throughput flat at zero while the queue grows.",),
         "Work piles up: {effect}.",
         (("Thread dump of a consumer:", "kubectl exec -n {ns} {pod} -- kill -3 1"),),
         (("Restart consumers", "Restarting usually frees a stuck connection.",
           "kubectl rollout restart deploy/{deploy} -n {ns}"),)),
    Kind("ReplicationLag", ("postgres",), "{Name} replication lag",
         "Replica {replica} is {lag}s behind",
         "WAL replay on {replica} is more than {lag} seconds behind the primary.",
         ("Reads from replicas return stale data.", "Lag graph climbing steadily."),
         "Stale reads; a failover now would lose recent writes.",
         (("Measure the lag on the replica:",
           "psql -h {replica} -c \"select now() - pg_last_xact_replay_timestamp() as lag;\""),
          ("Find long queries blocking replay:",
           "psql -h {replica} -c \"select pid, now() - query_start, query from pg_stat_activity "
           "where state = 'active' order by 2 desc limit 5;\"")),
         (("Cancel blocking queries", "Replay conflicts with long analytics queries.",
           "psql -h {replica} -c \"select pg_cancel_backend(pid) from pg_stat_activity "
           "where now() - query_start > interval '10 minutes';\""),
          ("Take the replica out", "Route reads to the primary until it catches up.", ""))),
    Kind("TooManyConnections", ("postgres",), "{Name} near max connections",
         "{Name} uses {pct}% of max_connections",
         "Connections to {db} are above {pct}% of max_connections ({maxconn}).",
         ("`FATAL: sorry, too many clients already` in application logs.",),
         "New connections are refused: every service using {db} starts failing.",
         (("Who holds the connections:",
           "psql -h {db} -c \"select usename, application_name, count(*) from pg_stat_activity "
           "group by 1, 2 order by 3 desc;\""),),
         (("Terminate idle sessions", "Kill idle sessions older than ten minutes.",
           "psql -h {db} -c \"select pg_terminate_backend(pid) from pg_stat_activity where "
           "state = 'idle' and now() - state_change > interval '10 minutes';\""),
          ("Check PgBouncer", "Make sure clients connect through the pooler.", ""))),
    Kind("LongRunningTransactions", ("postgres",), "{Name} long-running transactions",
         "Transaction open for {minutes} minutes on {db}",
         "A transaction on {db} has been open for more than {minutes} minutes.",
         ("Vacuum cannot clean up; table bloat grows.", "Locks held for a long time."),
         "Bloat, lock waits and, left alone, transaction id wraparound risk.",
         (("Find it:", "psql -h {db} -c \"select pid, usename, now() - xact_start as age, state, "
                       "left(query, 80) from pg_stat_activity order by xact_start limit 5;\""),),
         (("Terminate it", "After checking with the owner of the session.",
           "psql -h {db} -c \"select pg_terminate_backend(<pid>);\""),)),
    Kind("DeadlocksDetected", ("postgres",), "{Name} deadlocks",
         "{count} deadlocks per minute on {db}",
         "Postgres on {db} detects and aborts deadlocked transactions.",
         ("`deadlock detected` errors in application logs.",),
         "Aborted transactions surface as 500s if the application does not retry.",
         (("Deadlock details from the server log:",
           "kubectl logs -n {ns} {db}-0 | grep -A8 'deadlock detected' | tail -40"),),
         (("Roll back the release", "New code that locks rows in a different order is the usual "
           "cause.", ""),)),
    Kind("DiskSpaceLow", ("postgres",), "{Name} disk almost full",
         "{Name} data volume {pct}% full",
         "The data volume of {db} is {pct}% full and will fill in about {hours} hours.",
         ("Disk usage graph trending up.", "WAL or segment files accumulating."),
         "A full disk stops writes and can corrupt the instance.",
         (("What uses the space:", "kubectl exec -n {ns} {db}-0 -- du -sh /data/* | sort -h"),
          ("Stuck replication slots keep WAL:",
           "psql -h {db} -c \"select slot_name, active, pg_size_pretty(pg_wal_lsn_diff("
           "pg_current_wal_lsn(), restart_lsn)) from pg_replication_slots;\"")),
         (("Grow the volume", "Expand the PVC; the storage class allows online resize.",
           "kubectl patch pvc data-{db}-0 -n {ns} -p "
           "'{{\"spec\":{{\"resources\":{{\"requests\":{{\"storage\":\"{size}Gi\"}}}}}}}}'"),
          ("Drop a dead slot", "Only after confirming the consumer is gone.", ""))),
    Kind("BackupFailed", ("postgres", "redis"), "{Name} backup failed",
         "Last successful backup of {db} is {hours}h old",
         "The nightly backup of {db} failed or did not run.",
         ("Backup job in Error state.", "No new objects in the backup bucket."),
         "Point-in-time recovery window shrinks; data loss risk if the primary dies.",
         (("Read the backup job logs:", "kubectl logs -n {ns} job/{db}-backup --tail=100"),
          ("List recent backups:", "aws s3 ls s3://acme-backups/{db}/ | tail -5")),
         (("Run the backup now", "Start a manual backup and watch it finish.",
           "kubectl create job -n {ns} --from=cronjob/{db}-backup {db}-backup-manual"),)),
    Kind("MemoryHigh", ("redis",), "{Name} memory high",
         "{Name} memory at {pct}%",
         "{db} uses {pct}% of its memory limit.",
         ("Evictions start or heap GC time rises.",),
         "Cache misses increase and load moves to the backing database.",
         (("Check memory use and biggest keys or indices:",
           "redis-cli -h {db} info memory | grep -E 'used_memory_human|maxmemory_human'\n"
           "redis-cli -h {db} --bigkeys | tail -15"),),
         (("Raise maxmemory", "Temporary relief while the big keys are found.",
           "redis-cli -h {db} config set maxmemory {mem2}mb"),)),
    Kind("EvictionsSpike", ("redis",), "{Name} evictions spike",
         "{Name} evicting {rate} keys/s",
         "{db} evicts keys because it reached maxmemory.",
         ("Hit ratio drops.", "Database load rises behind the cache."),
         "Slower responses for everything that depends on the cache.",
         (("Eviction and hit counters:",
           "redis-cli -h {db} info stats | grep -E 'evicted|hits|misses'"),),
         (("Find the key growth", "Usually a new key pattern without TTL.", ""), _SCALE)),
    Kind("ReplicationBroken", ("redis",), "{Name} replication broken",
         "{Name} replica lost its master link",
         "A replica of {db} reports master_link_status:down.",
         ("Failover would lose data; reads from the replica are stale.",),
         "No redundancy for the cache until the link is back.",
         (("Replication state:", "redis-cli -h {db} info replication"),),
         (("Resync", "Restart the replica pod to force a full resync.",
           "kubectl delete pod -n {ns} {db}-1"),)),
    Kind("BrokerDown", ("kafka",), "{Name} broker down",
         "Kafka broker {db}-{count} is down",
         "A broker of {db} left the cluster.",
         ("Offline or under-replicated partitions.",),
         "Partitions led by the broker fail over; producers see errors meanwhile.",
         (("Broker pods:", "kubectl get pods -n {ns} -l app={db}"),),
         (("Restart", "Delete the pod; the StatefulSet brings it back with its volume.",
           "kubectl delete pod -n {ns} {db}-{count}"),)),
    Kind("ConsumerLagHigh", ("kafka",), "{Name} consumer lag high",
         "Consumer group {group} lags {backlog} messages",
         "Consumer group {group} on topic {topic} is {backlog} messages behind.",
         ("Lag graph rising for one or more partitions.",),
         "Events are processed late: {effect}.",
         (("Describe the group:",
           "kafka-consumer-groups.sh --bootstrap-server {broker} --describe --group {group}"),),
         (("Scale consumers", "Up to the number of partitions.",
           "kubectl scale deploy/{group} -n {ns} --replicas={replicas}"),)),
    Kind("UnderReplicatedPartitions", ("kafka",), "{Name} under-replicated partitions",
         "{count} partitions under-replicated",
         "{count} partitions have fewer in-sync replicas than configured.",
         ("ISR shrink events in broker logs.",),
         "Another broker loss could make partitions unavailable.",
         (("List them:", "kafka-topics.sh --bootstrap-server {broker} --describe "
                         "--under-replicated-partitions"),),
         (("Restart the lagging broker", "If one broker is behind on all of them.",
           "kubectl delete pod -n {ns} {db}-2"),)),
    Kind("ClusterRed", ("elasticsearch",), "{Name} cluster status red",
         "{Name} cluster is RED",
         "At least one primary shard of {db} is unassigned.",
         ("Searches return partial results or errors.",),
         "Data in the unassigned shards cannot be read or written.",
         (("Why is the shard unassigned:",
           "curl -s {es}/_cluster/allocation/explain?pretty | head -40"),),
         (("Retry allocation", "After fixing the cause (disk, node).",
           "curl -XPOST '{es}/_cluster/reroute?retry_failed=true'"),)),
    Kind("NodeNotReady", ("platform",), "{Name} node not ready",
         "Node {node} NotReady for {win} minutes",
         "Kubernetes node {node} stopped reporting Ready.",
         ("Pods on the node stuck Terminating or Unknown.",),
         "Capacity loss; pods are rescheduled elsewhere after the eviction timeout.",
         (("Node conditions:",
           "kubectl describe node {node} | sed -n '/Conditions/,/Addresses/p'"),
          ("Kubelet logs:",
           "ssh {node} sudo journalctl -u kubelet --since '15 min ago' | tail -40")),
         (("Drain and replace", "Cordon, drain and let the autoscaler replace it.",
           "kubectl cordon {node}\n"
           "kubectl drain {node} --ignore-daemonsets --delete-emptydir-data"),)),
    Kind("DNSResolutionFailures", ("platform",), "{Name} DNS resolution failures",
         "{pct}% of DNS lookups fail",
         "CoreDNS answers SERVFAIL or times out for {pct}% of queries.",
         ("`no such host` and `i/o timeout` errors across many services.",),
         "Every service that resolves names is affected.",
         (("CoreDNS pods and logs:",
           "kubectl -n kube-system logs -l k8s-app=kube-dns --since=10m | tail -30"),),
         (("Scale CoreDNS", "More replicas absorb the query rate.",
           "kubectl -n kube-system scale deploy/coredns --replicas={replicas}"),)),
)

#: Service and its "component:type" list; a component runs as deployment `<service>-<component>`.
_SERVICE_TABLE = (
        ("checkout", "api:http worker:worker db:postgres cache:redis"),
        ("payments", "api:http webhook-consumer:worker ledger-db:postgres"),
        ("orders", "api:http events:kafka db:postgres fulfillment-worker:worker"),
        ("inventory", "api:http sync-worker:worker db:postgres"),
        ("cart", "api:http cache:redis"),
        ("catalog", "api:http indexer:worker search:elasticsearch"),
        ("search", "api:http indexer:worker cluster:elasticsearch"),
        ("recommendations", "api:http trainer:worker cache:redis"),
        ("auth", "api:http token-service:http sessions:redis db:postgres"),
        ("identity", "api:http sync-worker:worker"),
        ("notifications", "api:http email-worker:worker sms-worker:worker"),
        ("billing", "api:http invoice-worker:worker db:postgres"),
        ("ledger", "api:http reconciler:worker db:postgres"),
        ("fraud", "scoring-api:http rules-worker:worker events:kafka"),
        ("shipping", "api:http label-worker:worker"),
        ("pricing", "api:http cache:redis"),
        ("promotions", "api:http scheduler:worker"),
        ("reviews", "api:http moderation-worker:worker db:postgres"),
        ("media", "upload-api:http resizer:worker"),
        ("api-gateway", "edge:http"),
        ("graphql-gateway", "api:http"),
        ("user-profile", "api:http db:postgres cache:redis"),
        ("feature-flags", "api:http"),
        ("analytics", "ingest-api:http loader:worker events:kafka"),
        ("event-bus", "cluster:kafka"),
        ("reporting", "api:http export-worker:worker warehouse:postgres"),
        ("etl", "scheduler:worker loader:worker"),
        ("ml-serving", "predict-api:http"),
        ("backup", "scheduler:worker"),
        ("kubernetes", "control-plane:platform"),
        ("node", "fleet:platform"),
        ("dns", "coredns:platform"),
        ("chat", "api:http presence:redis history-db:postgres"),
        ("support", "api:http ticket-worker:worker"),
        ("wallet", "api:http db:postgres"),
        ("subscriptions", "api:http renewal-worker:worker db:postgres"),
        ("tax", "api:http"),
        ("maps", "api:http tile-worker:worker cache:redis"),
        ("booking", "api:http confirm-worker:worker db:postgres"),
        ("loyalty", "api:http points-worker:worker"),
        ("partner-api", "api:http webhook-worker:worker"),
        ("webshop", "frontend:http ssr:http"),
        ("mobile-bff", "api:http"),
        ("admin", "portal:http audit-worker:worker"),
        ("compliance", "api:http archive-worker:worker"),
        ("geo", "ip-lookup:http"),
        ("translations", "api:http sync-worker:worker"),
        ("warehouse", "api:http picker-worker:worker db:postgres"),
        ("returns", "api:http refund-worker:worker"),
        ("vendor", "portal:http import-worker:worker"),
        ("quotes", "api:http db:postgres"),
        ("insurance", "api:http claims-worker:worker"),
        ("kyc", "api:http document-worker:worker"),
        ("ads", "serving-api:http bidder:http events:kafka"),
        ("video", "transcoder:worker stream-api:http"),
        ("crm", "api:http sync-worker:worker db:postgres"),
        ("forecasting", "api:http trainer:worker"),
        ("procurement", "api:http approval-worker:worker"),
        ("payroll", "api:http run-worker:worker db:postgres"),
        ("timesheets", "api:http"),
        ("status-page", "web:http"),
        ("audit-log", "ingest:worker store:elasticsearch"),
        ("secrets", "vault-api:http"),
        ("ci-runners", "scheduler:worker"),
        ("ingress", "nginx:platform"),
)

_SERVICES: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = tuple(
    (name, tuple((c.partition(":")[0], c.partition(":")[2]) for c in comps.split()))
    for name, comps in _SERVICE_TABLE
)
_TEAMS = ("team-storefront", "team-payments", "team-platform", "team-data", "team-identity",
          "team-logistics", "team-growth", "team-sre")
_TAGS = ("slo", "kubernetes", "database", "latency", "errors", "capacity", "queue", "tls",
         "customer-facing", "internal", "batch", "cache")
_EFFECTS = ("orders ship late", "emails go out late", "reports are stale", "refunds are delayed",
            "search results are out of date", "customers see old prices")
_CAUSES = ("a release with a missing index", "an expired credential", "a noisy neighbour on the "
           "node", "a retry storm after a dependency blip", "a config change that halved the pool",
           "a traffic spike from a marketing campaign", "a slow disk on one node",
           "a schema migration that locked a hot table", "a leaked connection in a new client",
           "a DNS change that pointed at the old cluster", "an unbounded cache key",
           "a cron job running twice")
_FIXES = ("rolled back within 10 minutes", "scaled out and added an alert on the saturation "
          "metric", "rotated the secret and added expiry monitoring", "killed the blocking "
          "query and added a statement timeout", "moved the pods and opened a ticket with the "
          "cloud provider", "reverted the config and added a review rule", "added a TTL and "
          "flushed the keys", "capped retries with a budget")
_BACKGROUND = (
    "{Name} is owned by {team} and runs in the `{ns}` namespace of the {cluster} cluster.",
    "At peak it handles about {rps} requests per second across {replicas} replicas.",
    "The main dashboard is {dash}; the alert rule lives in `alerts/{svc}.rules.yml`.",
    "Most incidents of this kind in the past year were caused by deploys, not load.",
    "The rule uses a {win}-minute window so short blips do not page.",
    "Traces for slow or failing requests are in Tempo under the service name `{deploy}`.",
    "Logs are shipped to Loki; query `{{namespace=\"{ns}\", app=\"{deploy}\"}}`.",
    "Capacity was last reviewed during the {quarter} load test.",
    "The service depends on {dep} for most requests and degrades without it.",
    "Config changes go through the `{svc}-config` repository and are applied by Argo CD.",
    "A synthetic check probes {host} every 30 seconds from three regions.",
    "On-call for {Name} rotates weekly; the handover notes live in the team wiki.",
)
_NOTES = (
    "Start with the dashboard before running commands: most of the time the graphs show "
    "whether one pod, one zone or everything is affected.",
    "If only one availability zone is affected, suspect the nodes or the network there "
    "rather than the application.",
    "Correlate the start of the alert with the deploy log in {chan}; Argo CD posts every "
    "sync there.",
    "Do not restart everything at once: restarting all replicas together turns a partial "
    "problem into a full outage.",
    "Write down what you did and when in the incident channel; the postmortem needs the "
    "timeline.",
    "The rule fires per pod for {Name}, so several alerts in one group usually mean one "
    "shared cause.",
    "Expect a few minutes of lag on the dashboard: metrics are scraped every 30 seconds and "
    "the alert evaluates a {win}-minute window.",
    "If the numbers look wrong, check that Prometheus is still scraping {deploy} before "
    "trusting the alert.",
    "Staging has the same alert rules with lower thresholds, so a repro there is cheap.",
    "Check the upstream status pages of the cloud provider if nothing changed on our side.",
)
_VERIFY = (
    "The alert resolves on its own once the {win}-minute window is clean.",
    "Watch the dashboard for at least 15 minutes after the change before closing the incident.",
    "Confirm with a synthetic request against {host} that users are served again.",
    "Leave a note in {chan} with what you changed, so the day shift can follow up.",
    "If you scaled anything by hand, open a ticket to make it permanent or revert it.",
    "File a follow-up for the owning team, {team}, with the graphs attached.",
)
_ESCALATION = (
    "Page {team} through the PagerDuty policy `{svc}-primary` if this is not resolved in "
    "{minutes} minutes.",
    "For customer impact, open an incident in {chan} and name an incident commander.",
    "Database problems go to team-data; network and node problems to team-platform.",
    "Outside business hours the secondary on-call is paged automatically after 15 minutes.",
)
_ACRONYMS = {"api": "API", "db": "DB", "dns": "DNS", "ml": "ML", "sms": "SMS", "etl": "ETL",
             "ssr": "SSR", "bff": "BFF", "ip": "IP", "graphql": "GraphQL", "coredns": "CoreDNS"}


@dataclass(frozen=True)
class Runbook:
    """One generated runbook and what an alert for it would say."""

    path: str
    service: str
    component: str
    kind: str
    alert_name: str
    alert_names: tuple[str, ...]
    title: str
    summary: str
    description: str
    text: str

    @property
    def words(self) -> int:
        return len(self.text.split())


def _display(name: str) -> str:
    return " ".join(_ACRONYMS.get(w, w) for w in name.split("-"))


def _camel(name: str) -> str:
    return "".join(_ACRONYMS.get(w, w.capitalize()) for w in name.split("-"))


def _combos(seed: int) -> list[tuple[str, str, Kind, str]]:
    """Every (service, component, kind, alert name) the generator can write, in seeded order."""
    combos: list[tuple[str, str, Kind, str]] = []
    for service, components in _SERVICES:
        for component, ctype in components:
            for kind in KINDS:
                if ctype in kind.types:
                    name = _camel(f"{service}-{component}") + kind.key
                    combos.append((service, component, kind, name))
    random.Random(seed).shuffle(combos)
    regions = ("EU", "US", "APAC")
    # Beyond the natural combinations, regional variants (runbooks per region are common).
    extra = [(s, c, k, f"{name}{r}") for r in regions for s, c, k, name in combos]
    return combos + extra


def _slots(rng: random.Random, service: str, component: str) -> dict[str, object]:
    deploy = f"{service}-{component}"
    replicas = rng.choice((3, 4, 6, 8, 12))
    mem = rng.choice((256, 512, 1024, 2048))
    others = [s for s, _ in _SERVICES if s != service]
    return {
        "svc": service, "deploy": deploy, "ns": service, "Name": _display(deploy)[:1].upper()
        + _display(deploy)[1:],
        "team": rng.choice(_TEAMS), "chan": f"#{service}-oncall",
        "cluster": rng.choice(("prod-eu-1", "prod-us-1", "prod-eu-2")),
        "dash": f"https://grafana.acme.example/d/{service}/{deploy}",
        "prom": "http://prometheus.monitoring:9090", "es": f"http://{deploy}.{service}:9200",
        "host": f"{service}.acme.example", "dep": rng.choice(others),
        "pod": f"{deploy}-{rng.randrange(16**8):08x}-{rng.randrange(36**5):05x}",
        "node": f"ip-10-{rng.randrange(256)}-{rng.randrange(256)}-{rng.randrange(256)}",
        "db": deploy, "replica": f"{deploy}-replica-{rng.randint(1, 3)}",
        "broker": f"{deploy}-0.{deploy}:9092", "topic": f"{service}.events.v{rng.randint(1, 3)}",
        "group": f"{service}-{rng.choice(('consumer', 'projector', 'indexer'))}",
        "queue": f"{service}.{rng.choice(('jobs', 'tasks', 'events', 'emails'))}",
        "pct": rng.choice((2, 5, 8, 12, 15, 25, 40, 85, 90, 95)), "thr": rng.choice((1, 2, 5)),
        "win": rng.choice((5, 10, 15, 30)), "ms": rng.randint(800, 4000),
        "thr_ms": rng.choice((250, 500, 1000)), "burn": rng.choice((6, 14, 14.4)),
        "restarts": rng.randint(3, 30), "mem": mem, "mem2": mem * 2,
        "cpu": rng.choice((500, 1000, 2000)), "replicas": replicas, "replicas2": replicas * 2,
        "ready": rng.randint(0, replicas - 1), "pool": rng.choice((20, 50, 100)),
        "backlog": rng.randint(5, 900) * 1000, "hours": rng.randint(2, 48),
        "lag": rng.randint(30, 900),
        "maxconn": rng.choice((200, 500, 1000)), "size": rng.choice((200, 500, 1000)),
        "rate": rng.randint(100, 5000), "count": rng.randint(1, 60), "days": rng.randint(1, 14),
        "minutes": rng.choice((15, 30)), "rps": rng.randint(50, 8000),
        "effect": rng.choice(_EFFECTS), "quarter": rng.choice(("Q1", "Q2", "Q3", "Q4")),
    }


def _render(
    rng: random.Random, kind: Kind, slots: dict[str, object], alert_names: tuple[str, ...],
    service: str, title: str, target_words: int,
) -> str:
    def fill(template: str) -> str:
        return template.format(**slots)

    head: list[str] = []
    style = rng.random()
    if style < 0.75:
        last = date(2026, 11, 1) - timedelta(days=rng.randint(0, 700))
        head += ["---", f"title: {title}", f"alert_names: [{', '.join(alert_names)}]",
                 f"services: [{service}]", f"owner: {slots['team']}", f"last_reviewed: {last}"]
        head += [f"tags: [{', '.join(rng.sample(_TAGS, 3))}]", "---"]
    if style < 0.9:
        head += [f"# {title}", ""]
    # Each section is a list of markdown blocks, joined by blank lines.
    background = [fill(s) for s in rng.sample(_BACKGROUND, len(_BACKGROUND))]
    sections: dict[str, list[str]] = {
        "Background": [" ".join(background.pop() for _ in range(2))],
        "Symptoms": ["\n".join(f"- {fill(s)}" for s in kind.symptoms)],
        "Impact": [fill(kind.impact)],
        "Diagnosis": [f"{fill(lead)}\n\n```bash\n{fill(cmd)}\n```" for lead, cmd in kind.diagnosis],
        "Mitigation": [
            f"### {heading}\n\n{fill(prose)}" + (f"\n\n```bash\n{fill(cmd)}\n```" if cmd else "")
            for heading, prose, cmd in kind.mitigation
        ],
        "Escalation": [fill(rng.choice(_ESCALATION))],
    }

    def body() -> str:
        parts = [f"## {name}\n\n" + "\n\n".join(blocks) for name, blocks in sections.items()]
        return "\n".join(head) + "\n" + "\n\n".join(parts) + "\n"

    # Grow towards the target the way real runbooks grow: more context, more diagnosis
    # notes, a verification section, and finally a table of past incidents.
    notes = [fill(s) for s in rng.sample(_NOTES, len(_NOTES))]
    verify = [fill(s) for s in rng.sample(_VERIFY, len(_VERIFY))]
    incidents: list[str] = []
    while len(body().split()) < target_words:
        step = len(incidents) + len(notes) + len(verify) + len(background)
        if background and step % 3 == 0:
            sections["Background"][-1] += " " + background.pop()
        elif notes and step % 3 == 1:
            sections["Diagnosis"].insert(rng.randint(0, len(sections["Diagnosis"])), notes.pop())
        elif verify:
            sections.setdefault("Verification", []).append(verify.pop())
        else:
            when = date(2026, 10, 1) - timedelta(days=rng.randint(0, 900))
            incidents.append(f"| {when} | {rng.choice(_CAUSES)} | {rng.choice(_FIXES)} | "
                             f"PM-{rng.randint(100, 999)} |")
            sections["Past incidents"] = [
                "| date | cause | what fixed it | postmortem |\n|---|---|---|---|\n"
                + "\n".join(sorted(incidents, reverse=True))
            ]
    return body()


def runbooks(count: int, seed: int = 7) -> list[Runbook]:
    """The first `count` runbooks of the corpus for `seed`."""
    combos = _combos(seed)
    if count > len(combos):
        raise ValueError(f"the generator can write at most {len(combos)} runbooks, not {count}")
    out: list[Runbook] = []
    for i, (service, component, kind, alert_name) in enumerate(combos[:count]):
        rng = random.Random(f"{seed}:{i}")
        slots = _slots(rng, service, component)
        title = kind.title.format(**slots)
        aliases = (alert_name, kind.key) if rng.random() < 0.3 else (alert_name,)
        text = _render(rng, kind, slots, aliases, service, title, rng.randint(MIN_WORDS, MAX_WORDS))
        out.append(Runbook(
            path=f"{service}/{alert_name}.md", service=service, component=component,
            kind=kind.key, alert_name=alert_name, alert_names=aliases, title=title,
            summary=kind.summary.format(**slots), description=kind.description.format(**slots),
            text=text,
        ))
    return out


def write_corpus(root: Path, count: int, seed: int = 7) -> list[Runbook]:
    """Write the first `count` runbooks under `root` and return them."""
    books = runbooks(count, seed)
    for book in books:
        path = root / book.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(book.text, encoding="utf-8")
    return books
