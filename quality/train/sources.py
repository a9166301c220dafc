"""The pinned list of public projects the training collection is built from.

Each corpus is one project's alert rules and runbooks, read from bare mirrors at the
commits pinned here (gitread). The repositories behind the judged corpora are never read:
`check_allowed` refuses them, and a test holds every pin to it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "FORBIDDEN_OWNERS",
    "FORBIDDEN_REPOS",
    "SOURCES",
    "CorpusSource",
    "Forbidden",
    "Pin",
    "check_allowed",
    "spdx",
]

#: Every repository of these owners is behind a judged corpus.
FORBIDDEN_OWNERS = frozenset(
    {
        "prometheus-operator",
        "openshift",
        "red-hat-storage",
        "stolostron",
        "open-cluster-management-io",
        "rhobs",
        "kubevirt",
        "k8snetworkplumbingwg",
        "cortexproject",
        "thanos-io",
    }
)
#: And these repositories (the Prometheus ones for their mixins).
FORBIDDEN_REPOS = frozenset(
    {
        "etcd-io/etcd",
        "kubernetes-monitoring/kubernetes-mixin",
        "prometheus/prometheus",
        "prometheus/alertmanager",
        "prometheus/node_exporter",
        "grafana/mimir",
        "grafana/loki",
        "ceph/ceph",
        "rook/rook",
    }
)


class Forbidden(ValueError):
    """A pinned source is one the judged corpora come from."""


def check_allowed(repo: str) -> None:
    owner = repo.split("/", 1)[0].lower()
    if owner in FORBIDDEN_OWNERS or repo.lower() in FORBIDDEN_REPOS:
        raise Forbidden(f"{repo} is behind a judged corpus: it must never be read or trained on")


@dataclass(frozen=True)
class Pin:
    repo: str
    commit: str
    #: The license file at that commit; "" when the repository has none.
    license_file: str


@dataclass(frozen=True)
class CorpusSource:
    name: str
    domain: str
    #: Which extractor reads it (collect.EXTRACTORS: extract_files, extract_pages).
    extractor: str
    pins: tuple[Pin, ...]
    #: Extractor-specific selection, e.g. the rule folders of one domain.
    select: tuple[str, ...] = ()


_GITLAB = Pin(
    "mattrussi/gitlab-com-runbooks", "f921d0a4d0e3ae278ec5a0c232a14206a0102bdc", "LICENSE"
)
_SRERUN = Pin("srerun/prometheus-alerts", "78649c36a63b22d89e192257a0e49081bdbc2db7", "")

SOURCES: tuple[CorpusSource, ...] = (
    CorpusSource(
        "tempo",
        "tracing storage",
        "tempo",
        (Pin("grafana/tempo", "ad33aa8fafc41a4ea58519f7b7a88b1aa1383224", "LICENSE"),),
    ),
    CorpusSource(
        "pingcap",
        "distributed SQL database",
        "pingcap",
        (
            Pin("shczhen/docs", "ba3a662e52139c8a70c8247cdcf8421df7fd3d81", "LICENSE"),
            Pin("tikv/tikv", "8e964719db0d2088d47a280a1dde3fefa1b31d6b", "LICENSE"),
            Pin("tikv/pd", "a186e0cc61def1408fc57ae7b3d1044a572c8ae3", "LICENSE"),
            Pin("pingcap/tidb-ansible", "61f5ec376c82381107a2b1e6e1eade09d8ca39a2", "LICENSE"),
        ),
    ),
    CorpusSource(
        "sourcegraph",
        "code search service",
        "sourcegraph",
        (Pin("sourcegraph/docs", "3499c0874e74188094195130e6a57ad786457d16", ""),),
    ),
    CorpusSource(
        "netapp-harvest",
        "storage arrays",
        "harvest",
        (Pin("NetApp/harvest", "7a7ba3dfd21216a4728d1f46c0af2350ee4df405", "LICENSE"),),
    ),
    CorpusSource(
        "qubership",
        "search, streaming, coordination and workflow operators",
        "qubership",
        (
            Pin(
                "Netcracker/qubership-opensearch",
                "19eff59f31706efd82debbeb24e79f81c67d672f",
                "LICENSE",
            ),
            Pin(
                "Netcracker/qubership-kafka", "22fe7bb6e6624599b1ab17eef64ed6a2249c88a8", "LICENSE"
            ),
            Pin(
                "Netcracker/qubership-zookeeper",
                "633433cf06bd2bebf4e58eafcda561e9ce5f02ff",
                "LICENSE",
            ),
            Pin(
                "Netcracker/qubership-rabbitmq",
                "67138eadc5659cd3fd5b1c0a7a2aa07483371fbc",
                "LICENSE",
            ),
            Pin(
                "Netcracker/qubership-consul", "11920f10f263e122968642ce3a24c48137ef9f4b", "LICENSE"
            ),
            Pin(
                "Netcracker/qubership-mistral-operator",
                "7dc7fa8faa02ce8cebe13b827a218b371b12323b",
                "LICENSE",
            ),
        ),
    ),
    CorpusSource(
        "cloudnative-pg",
        "PostgreSQL on Kubernetes",
        "runbook_folder",
        (Pin("cloudnative-pg/charts", "b21ad2dac7992215b8572007adb7448e3c8cc5db", "LICENSE"),),
        (
            "cloudnative-pg/charts",
            "charts/cluster/prometheus_rules",
            "charts/cluster/docs/runbooks",
            "cloudnative-pg",
        ),
    ),
    CorpusSource(
        "promscale",
        "time-series storage on PostgreSQL",
        "runbook_folder",
        (Pin("timescale/promscale", "6ee8545bf30d3bd1ba778cba1736eb0ac21169fe", "LICENSE"),),
        ("timescale/promscale", "docs/mixin/alerts", "docs/runbooks", "promscale"),
    ),
    CorpusSource(
        "gitlab",
        "SaaS platform (git, CI, databases)",
        "gitlab",
        (_GITLAB,),
        ("rules",),
    ),
    CorpusSource(
        "gitlab-slo",
        "SaaS platform: generated SLO alerts, one README per service",
        "gitlab",
        (_GITLAB,),
        ("thanos-rules",),
    ),
    CorpusSource(
        "srerun-databases",
        "databases",
        "srerun",
        (_SRERUN,),
        (
            "cassandra",
            "clickhouse",
            "elasticsearch",
            "hadoop",
            "meilisearch",
            "mongodb",
            "mysql",
            "patroni",
            "pgbouncer",
            "postgresql",
            "redis",
            "solr",
            "sql-server",
        ),
    ),
    CorpusSource(
        "srerun-queues",
        "queues and streaming",
        "srerun",
        (_SRERUN,),
        ("kafka", "nats", "pulsar", "rabbitmq", "sidekiq", "zookeeper"),
    ),
    CorpusSource(
        "srerun-network",
        "networking and proxies",
        "srerun",
        (_SRERUN,),
        (
            "apache",
            "blackbox",
            "cloudflare",
            "consul",
            "coredns",
            "freeradius",
            "freeswitch",
            "haproxy",
            "istio",
            "juniper",
            "linkerd",
            "netelastic",
            "nginx",
            "opnsense",
            "oxidized",
            "speedtest",
            "ssl",
            "traefik",
        ),
    ),
    CorpusSource(
        "srerun-hosts",
        "hosts, hardware and platforms",
        "srerun",
        (_SRERUN,),
        (
            "apc-ups",
            "argocd",
            "docker-containers",
            "graph-node",
            "grafana-alloy",
            "hashicorp-vault",
            "host-and-hardware",
            "jenkins",
            "jvm",
            "kubernetes",
            "minio",
            "netdata",
            "nomad",
            "openebs",
            "pbs-exporter",
            "php-fpm",
            "proxmox",
            "smart-device-monitoring",
            "vmware",
            "windows-server",
            "zfs",
        ),
    ),
)

_LICENSES = (
    ("GNU AFFERO GENERAL PUBLIC LICENSE", "AGPL-3.0"),
    ("Apache License", "Apache-2.0"),
    ("Attribution-ShareAlike 3.0", "CC-BY-SA-3.0"),
    ("Attribution 4.0", "CC-BY-4.0"),
    ("Permission is hereby granted, free of charge", "MIT"),
)


def spdx(text: str) -> str:
    """The SPDX id of a license file's text; NOASSERTION when none is recognised."""
    head = text[:4000]
    return next((ident for marker, ident in _LICENSES if marker in head), "NOASSERTION")
