"""The combinatorial pools runbooks are filled from: the services and their components, teams,
tags, and the sentences and past incidents that vary from runbook to runbook.

Any text change here changes the corpus: bump GENERATOR_VERSION (generate.py).
"""

from __future__ import annotations

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

SERVICES: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = tuple(
    (name, tuple((c.partition(":")[0], c.partition(":")[2]) for c in comps.split()))
    for name, comps in _SERVICE_TABLE
)
TEAMS = ("team-storefront", "team-payments", "team-platform", "team-data", "team-identity",
         "team-logistics", "team-growth", "team-sre")
TAGS = ("slo", "kubernetes", "database", "latency", "errors", "capacity", "queue", "tls",
        "customer-facing", "internal", "batch", "cache")
EFFECTS = ("orders ship late", "emails go out late", "reports are stale", "refunds are delayed",
           "search results are out of date", "customers see old prices")
CAUSES = ("a release with a missing index", "an expired credential", "a noisy neighbour on the "
          "node", "a retry storm after a dependency blip", "a config change that halved the pool",
          "a traffic spike from a marketing campaign", "a slow disk on one node",
          "a schema migration that locked a hot table", "a leaked connection in a new client",
          "a DNS change that pointed at the old cluster", "an unbounded cache key",
          "a cron job running twice")
FIXES = ("rolled back within 10 minutes", "scaled out and added an alert on the saturation "
         "metric", "rotated the secret and added expiry monitoring", "killed the blocking "
         "query and added a statement timeout", "moved the pods and opened a ticket with the "
         "cloud provider", "reverted the config and added a review rule", "added a TTL and "
         "flushed the keys", "capped retries with a budget")
BACKGROUND = (
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
NOTES = (
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
VERIFY = (
    "The alert resolves on its own once the {win}-minute window is clean.",
    "Watch the dashboard for at least 15 minutes after the change before closing the incident.",
    "Confirm with a synthetic request against {host} that users are served again.",
    "Leave a note in {chan} with what you changed, so the day shift can follow up.",
    "If you scaled anything by hand, open a ticket to make it permanent or revert it.",
    "File a follow-up for the owning team, {team}, with the graphs attached.",
)
ESCALATION = (
    "Page {team} through the PagerDuty policy `{svc}-primary` if this is not resolved in "
    "{minutes} minutes.",
    "For customer impact, open an incident in {chan} and name an incident commander.",
    "Database problems go to team-data; network and node problems to team-platform.",
    "Outside business hours the secondary on-call is paged automatically after 15 minutes.",
)
ACRONYMS = {"api": "API", "db": "DB", "dns": "DNS", "ml": "ML", "sms": "SMS", "etl": "ETL",
            "ssr": "SSR", "bff": "BFF", "ip": "IP", "graphql": "GraphQL", "coredns": "CoreDNS"}
