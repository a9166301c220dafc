"""The alert kinds of the workloads the services run (HTTP services and workers), the
`Kind` template type, and the mitigation steps kinds share.

Any text change here changes the corpus: bump GENERATOR_VERSION (generate.py).
"""

from __future__ import annotations

from dataclasses import dataclass


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


K8S_DIAG = (
    ("Look at the pods and their recent events:",
     "kubectl get pods -n {ns} -l app={deploy} -o wide\n"
     "kubectl get events -n {ns} --sort-by=.lastTimestamp | tail -20"),
    ("Compare with the last rollout:", "kubectl rollout history deploy/{deploy} -n {ns} | tail -3"),
)
ROLLBACK = ("Roll back", "If it started with a release, roll back first and debug later.",
            "kubectl rollout undo deploy/{deploy} -n {ns}")
SCALE = ("Scale out", "Add replicas to buy time while the cause is found.",
         "kubectl scale deploy/{deploy} -n {ns} --replicas={replicas}")

WORKLOAD_KINDS: tuple[Kind, ...] = (
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
          *K8S_DIAG),
         (ROLLBACK,
          ("Failing dependency", "If one upstream fails, follow its runbook and enable the "
           "fallback flag `{svc}.degraded_mode=true`.", ""),
          SCALE)),
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
          *K8S_DIAG),
         (SCALE, ("Slow database", "If traces show slow queries, see the database runbook for "
                   "long-running queries and kill the offenders.", ""), ROLLBACK)),
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
           "from pg_stat_activity where state = 'idle in transaction';\""), ROLLBACK)),
    Kind("SLOBurnRateFast", ("http",), "{Name} fast SLO burn",
         "{Name} burns its error budget {burn}x too fast",
         "The 1h and 5m burn rates of the {Name} availability SLO both exceed {burn}.",
         ("Error budget dashboard shows a steep drop.",
          "Usually accompanied by a 5xx or latency alert for the same service."),
         "At this rate the monthly error budget is gone within hours.",
         (("Find which SLI burns:", "open {dash}"),
          *K8S_DIAG),
         (ROLLBACK, ("Freeze deploys", "Announce a deploy freeze in {chan} until the burn "
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
          *K8S_DIAG),
         (ROLLBACK, ("Bad config", "If a ConfigMap or Secret changed, revert it and restart.",
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
          ROLLBACK)),
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
           "kubectl set resources deploy/{deploy} -n {ns} --limits=cpu={cpu}m"), SCALE)),
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
           "at once; fix the dependency or relax the probe.", ""), ROLLBACK)),
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
         (("Wrong tag", "Fix the tag in the deploy repository or roll back.", ""), ROLLBACK)),
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
         (SCALE, ("Poison message", "Move the failing message to the dead-letter queue.", ""))),
    Kind("JobFailureRate", ("worker",), "{Name} jobs failing",
         "{Name} job failure rate {pct}%",
         "{pct}% of {deploy} jobs failed in the last {win} minutes.",
         ("Failed jobs counter rising.", "Same exception repeated in the logs."),
         "Work is not done: {effect}.",
         (("Group failures by error:",
           "kubectl logs -n {ns} deploy/{deploy} --since=30m | grep -i 'job failed' "
           "| sort | uniq -c | sort -rn | head"),
          *K8S_DIAG),
         (ROLLBACK, ("Retry failed jobs", "Once fixed, requeue the failed jobs.",
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
)
