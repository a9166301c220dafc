"""The Prometheus rule expression behind each alert kind, for the cases' `generatorURL`.

Slots are the runbook's (generate.py `_slots`), `{{`/`}}` are literal braces. The metric
names are the ones real exporters use for such a rule (kube-state-metrics, cAdvisor,
postgres_exporter, redis_exporter, kafka_exporter, elasticsearch_exporter, CoreDNS). Where
the generated runbooks quote a metric in their diagnosis commands (`http_requests_total`,
`http_request_duration_seconds_bucket`), the rule uses that name, so metric evidence in the
search behaves as in a real corpus: quoted by many runbooks of one kind, and by none of
the others.

Changing these changes the cases, never the corpus.
"""

from __future__ import annotations

_ERRORS = 'sum(rate(http_requests_total{{app="{deploy}",code=~"5.."}}[{w}]))'
_REQUESTS = 'sum(rate(http_requests_total{{app="{deploy}"}}[{w}]))'
_POD = 'namespace="{ns}",pod=~"{deploy}-.*"'


def _error_ratio(window: str) -> str:
    return f"({_ERRORS} / {_REQUESTS})".replace("{w}", window)


EXPRESSIONS: dict[str, str] = {
    "HighErrorRate": _error_ratio("{win}m") + " > {thr} / 100",
    "HighLatencyP99":
        "histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket"
        '{{app="{deploy}"}}[5m]))) > {thr_ms} / 1000',
    "UpstreamTimeouts":
        'sum(rate(http_client_requests_total{{app="{deploy}",peer="{dep}",outcome="timeout"}}'
        '[5m])) / sum(rate(http_client_requests_total{{app="{deploy}",peer="{dep}"}}[5m])) '
        "> 0.05",
    "ConnectionPoolExhausted":
        'max by (pod) (db_client_connections_usage{{app="{deploy}",state="used"}} / '
        'db_client_connections_max{{app="{deploy}"}}) >= 0.95',
    "SLOBurnRateFast":
        _error_ratio("1h") + " > {burn} * 0.001 and " + _error_ratio("5m") + " > {burn} * 0.001",
    "PodCrashLooping":
        "max_over_time(kube_pod_container_status_waiting_reason{{" + _POD
        + ',reason="CrashLoopBackOff"}}[5m]) >= 1',
    "ContainerOOMKilled":
        "kube_pod_container_status_last_terminated_reason{{" + _POD + ',reason="OOMKilled"}} '
        "== 1 and on (pod) increase(kube_pod_container_status_restarts_total{{" + _POD
        + "}}[10m]) > 0",
    "DeploymentReplicasMismatch":
        'kube_deployment_spec_replicas{{namespace="{ns}",deployment="{deploy}"}} != '
        'kube_deployment_status_replicas_available{{namespace="{ns}",deployment="{deploy}"}}',
    "CPUThrottlingHigh":
        "sum by (pod) (increase(container_cpu_cfs_throttled_periods_total{{" + _POD
        + "}}[5m])) / sum by (pod) (increase(container_cpu_cfs_periods_total{{" + _POD
        + "}}[5m])) > 0.25",
    "CertificateExpiringSoon":
        'certmanager_certificate_expiration_timestamp_seconds{{namespace="{ns}",'
        'name="{svc}-tls"}} - time() < 21 * 86400',
    "ReadinessProbeFailing":
        "sum(kube_pod_status_ready{{" + _POD + ',condition="false"}}) > 0',
    "TrafficDrop":
        'sum(rate(http_requests_total{{app="{deploy}"}}[5m])) / '
        'sum(rate(http_requests_total{{app="{deploy}"}}[5m] offset 1w)) < 0.5',
    "HPAMaxedOut":
        'kube_horizontalpodautoscaler_status_current_replicas{{namespace="{ns}",'
        'horizontalpodautoscaler="{deploy}"}} >= kube_horizontalpodautoscaler_spec_max_replicas'
        '{{namespace="{ns}",horizontalpodautoscaler="{deploy}"}}',
    "ImagePullBackOff":
        "max by (pod) (kube_pod_container_status_waiting_reason{{" + _POD
        + ',reason=~"ErrImagePull|ImagePullBackOff"}}) > 0',
    "QueueBacklog":
        'rabbitmq_queue_messages_ready{{queue="{queue}"}} > 5000 and '
        'deriv(rabbitmq_queue_messages_ready{{queue="{queue}"}}[15m]) > 0',
    "JobFailureRate":
        'sum(rate(worker_jobs_failed_total{{app="{deploy}"}}[{win}m])) / '
        'sum(rate(worker_jobs_processed_total{{app="{deploy}"}}[{win}m])) > 0.05',
    "DeadLetterQueueGrowing":
        'delta(rabbitmq_queue_messages{{queue="{queue}.dlq"}}[30m]) > 100',
    "CronJobMissedSchedule":
        'time() - kube_cronjob_status_last_successful_time{{namespace="{ns}",'
        'cronjob="{deploy}"}} > 2 * 3600',
    "JobDurationHigh":
        'time() - kube_job_status_start_time{{namespace="{ns}",job_name=~"{deploy}.*"}} > '
        '4 * 3600 and kube_job_status_active{{namespace="{ns}",job_name=~"{deploy}.*"}} > 0',
    "ConsumerStalled":
        'sum(rate(worker_messages_acked_total{{app="{deploy}"}}[{win}m])) == 0 and '
        'sum(rabbitmq_queue_messages_ready{{queue="{queue}"}}) > 0',
    "ReplicationLag": 'pg_replication_lag_seconds{{instance=~"{replica}.*"}} > 30',
    "TooManyConnections":
        'sum by (instance) (pg_stat_activity_count{{instance=~"{db}.*"}}) / sum by (instance) '
        '(pg_settings_max_connections{{instance=~"{db}.*"}}) > 0.8',
    "LongRunningTransactions":
        'max(pg_stat_activity_max_tx_duration{{instance=~"{db}.*"}}) > {minutes} * 60',
    "DeadlocksDetected":
        'sum(rate(pg_stat_database_deadlocks{{instance=~"{db}.*"}}[5m])) * 60 > 1',
    "DiskSpaceLow":
        'predict_linear(kubelet_volume_stats_available_bytes{{namespace="{ns}",'
        'persistentvolumeclaim="data-{db}-0"}}[6h], 24 * 3600) < 0',
    "BackupFailed":
        'time() - kube_cronjob_status_last_successful_time{{namespace="{ns}",'
        'cronjob="{db}-backup"}} > 26 * 3600',
    "MemoryHigh":
        'redis_memory_used_bytes{{instance=~"{db}.*"}} / redis_memory_max_bytes'
        '{{instance=~"{db}.*"}} > 0.9',
    "EvictionsSpike": 'sum(rate(redis_evicted_keys_total{{instance=~"{db}.*"}}[5m])) > 100',
    "ReplicationBroken": 'redis_master_link_up{{instance=~"{db}.*"}} == 0',
    "BrokerDown": 'count(kafka_broker_info{{namespace="{ns}"}}) < 3',
    "ConsumerLagHigh":
        'sum by (consumergroup) (kafka_consumergroup_lag{{consumergroup="{group}",'
        'topic="{topic}"}}) > 10000',
    "UnderReplicatedPartitions":
        'sum(kafka_topic_partition_under_replicated_partition{{namespace="{ns}"}}) > 0',
    "ClusterRed": 'elasticsearch_cluster_health_status{{cluster="{db}",color="red"}} == 1',
    "NodeNotReady":
        'kube_node_status_condition{{node="{node}",condition="Ready",status="true"}} == 0',
    "DNSResolutionFailures":
        'sum(rate(coredns_dns_responses_total{{rcode="SERVFAIL"}}[5m])) / '
        "sum(rate(coredns_dns_responses_total[5m])) > 0.01",
}
