"""All configuration, read from the environment once, validated, and passed in from there.

No other module reads `os.environ`. The names are a contract with deployments and other
tools: keep them (see the settings table in README.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from redis.asyncio.connection import parse_url

from enricher.errors import ConfigError

CommaList = Annotated[tuple[str, ...], NoDecode]
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def is_http_url(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def split_commas(value: object) -> object:
    """Validator helper: `"a, b"` in the environment becomes `("a", "b")`."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    # --- index (shared by ingest and the service) ---
    qdrant_url: str | None = None
    qdrant_path: Path = Path("./data/qdrant")
    qdrant_api_key: SecretStr | None = None
    qdrant_collection: str = "runbooks"
    qdrant_timeout_s: float = 5.0
    redis_url: str = "redis://localhost:6379/0"
    #: Redis Sentinels (`host:port`, comma separated). Set, the service asks them for the
    #: primary of REDIS_SENTINEL_MASTER and follows a failover; REDIS_URL then gives only the
    #: database number and the data nodes' password (enricher.redis_connect).
    redis_sentinels: CommaList = ()
    redis_sentinel_master: str | None = Field(default=None, validate_default=True)
    #: The Sentinels' own password (their `requirepass`), when they have one.
    redis_sentinel_password: SecretStr | None = None
    #: Replicas that must hold a webhook's job before it is answered 202 (Redis WAIT); 0
    #: answers once the primary has it. Past REDIS_MIN_REPLICAS_ACK_TIMEOUT_MS: 503 (at most
    #: 1500: the wait must end before the client's 2 s socket timeout reads it as dead).
    redis_min_replicas_ack: int = Field(default=0, ge=0)
    redis_min_replicas_ack_timeout_ms: int = Field(default=500, ge=1, le=1500)
    models_dir: Path = Path("./models")
    #: Use the int8-quantized dense model: the query embedding in 2-3 ms instead of about 11,
    #: with no loss of matched-and-right or false matches on any of the four eval corpora
    #: (docs/RETRIEVAL.md). False keeps the fp32 model (an index built with it needs it).
    embed_int8: bool = True
    #: Load the dense model from the Hugging Face hub by name instead of MODELS_DIR.
    #: Only for machines with network access; the offline build is the default.
    embed_from_hub: bool = False

    # --- ingest ---
    chunk_max_chars: int = Field(default=1500, ge=200)
    chunk_min_chars: int = Field(default=100, ge=0)
    #: Runbook folders the service syncs itself (comma separated), at startup and every
    #: SYNC_INTERVAL_S. Empty: the service only reads what `python -m ingest` indexed.
    runbook_roots: CommaList = ()
    sync_interval_s: float = Field(default=60.0, ge=1)
    #: A service started on an empty index holds pages this long at most while it builds
    #: the index (enricher.pipeline.first_index).
    first_sync_wait_s: float = Field(default=120.0, ge=0)
    #: Read git metadata (revision, last commit date) of the runbook roots when syncing.
    sync_use_git: bool = True
    #: A source whose listing drops more than this share of its documents keeps them until
    #: the shrink is confirmed (`python -m ingest --allow-prune`, or this raised; 1: never).
    prune_max_fraction: float = Field(default=0.5, gt=0, le=1)
    #: A git remote of runbooks the service clones and fetches every SYNC_INTERVAL_S
    #: (ingest.gitremote; docs/SOURCES.md), beside RUNBOOK_ROOTS or instead of them.
    runbook_git_url: str | None = None
    #: The branch or tag to serve.
    runbook_git_ref: str = "main"
    #: The runbooks' folder inside the repository ("" = the whole repository).
    runbook_git_subdir: str = ""
    #: Token for an https remote (sent as the password of HTTP basic auth); unset, git's
    #: own credential helper or ssh key is used.
    runbook_git_token: SecretStr | None = None
    #: Where the clone lives.
    runbook_git_dir: Path = Path("./data/git")
    #: Secrets of POST /webhook/git (enricher.githook), comma separated (several during
    #: rotation): GitHub's webhook secret (X-Hub-Signature-256) or GitLab's token.
    runbook_git_webhook_secrets: CommaList = ()

    # --- Confluence source (docs/SOURCES.md) ---
    #: The site: `https://acme.atlassian.net/wiki` (Cloud) or the Data Center base URL.
    confluence_url: str | None = None
    #: Space keys to index, comma separated (required with CONFLUENCE_URL).
    confluence_spaces: CommaList = ()
    #: Only pages with this label, when set.
    confluence_label: str | None = None
    #: Cloud: the Atlassian account's email and an API token (basic auth).
    confluence_email: str | None = None
    confluence_api_token: SecretStr | None = None
    #: Data Center / Server: a personal access token (bearer).
    confluence_personal_token: SecretStr | None = None
    #: One request's timeout (timeouts, 429 and 5xx are retried).
    confluence_timeout_s: float = Field(default=30.0, gt=0)

    # --- search ---
    score_threshold: float = Field(default=0.30, ge=0, le=1)
    global_score_threshold: float = Field(default=0.30, ge=0, le=1)
    stale_after_days: int = Field(default=180, ge=1)
    #: The reader (enricher.search.reader) reads the alert with each of the first
    #: READER_TOP_K candidates of a search the names did not decide. Unset: on when its
    #: model folder (READER_DIR, default the one shipped beside the module) is there.
    reader_enabled: bool | None = None
    reader_dir: Path | None = None
    reader_top_k: int = Field(default=3, ge=1, le=5)

    # --- HTTP service ---
    host: str = "127.0.0.1"
    port: int = 8080
    #: One of LOG_LEVELS, any case.
    log_level: str = "INFO"
    #: Largest body read whole (PagerDuty), and largest single alert or field of an
    #: Alertmanager body.
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    #: Largest Alertmanager body in all, streamed after auth (enricher.app): about 14,000
    #: alerts, read in a few seconds, inside Alertmanager's 10 s timeout. Memory does not
    #: grow with it (about 0.5 MiB for any size).
    alertmanager_max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    #: Request headers larger than this in all get 431 (read up to MAX_BODY_BYTES first, so
    #: the client hears the answer instead of a connection reset).
    max_header_bytes: int = Field(default=32 * 1024, ge=1024)
    #: Idle keep-alive connections are kept this long. Alertmanager's HTTP client keeps
    #: them 5 minutes and reuses them; closing first makes it log "Notify attempt failed".
    keep_alive_s: float = Field(default=330.0, gt=0)
    #: A request's headers must be in within this long of its first byte (or of the
    #: connection opening); a client that stalls gets 408 and is closed (enricher.serving).
    header_timeout_s: float = Field(default=10.0, gt=0)
    #: Its body within this long of its headers. Alertmanager gives up after about 10 s and
    #: PagerDuty after 5 s, so no sender of ours is cut off.
    body_timeout_s: float = Field(default=30.0, gt=0)
    #: Open connections at most; past it a new one gets 503 (senders retry) and is closed
    #: before anything is read. The open-files limit is raised to fit it at startup.
    max_connections: int = Field(default=1000, ge=1)
    #: Accepted `Authorization: Bearer` tokens for /webhook/alertmanager (comma separated).
    alertmanager_bearer_tokens: CommaList = ()
    #: Accepted basic-auth credentials, `user:password` pairs, comma separated.
    alertmanager_basic_auth: CommaList = ()
    #: PagerDuty v3 signing secrets (comma separated; several during rotation).
    pagerduty_signing_secrets: CommaList = ()
    #: Grafana webhook HMAC secrets for /webhook/grafana (comma separated, for rotation).
    grafana_signing_secrets: CommaList = ()
    #: The header Grafana's contact point is set to send its timestamp in (Grafana has no
    #: default name); with it, `timestamp:body` is signed and old requests are refused.
    grafana_signing_timestamp_header: str = "X-Grafana-Alerting-Timestamp"
    #: How far a signed timestamp may be from our clock before the request is a replay.
    grafana_signing_max_age_s: float = Field(default=300.0, gt=0)
    #: Serve the webhooks that have no credentials configured without auth (a configured
    #: token or secret is always enforced). Only for local demos: `make run` sets it.
    allow_unauthenticated: bool = False
    #: Enrichment workers in the process.
    workers: int = Field(default=4, ge=1)
    #: Stable name of this replica for the job queue (default: the host name). Keep it
    #: stable across restarts so a restarted process re-reads its own unfinished jobs;
    #: make it unique per replica.
    worker_id: str | None = None

    # --- Slack ---
    slack_bot_token: SecretStr | None = None
    slack_channel: str | None = None
    #: JSON list of {"service": glob, "severity": glob, "channel": "..."}; first match wins.
    slack_routes: str = "[]"
    slack_webhook_url: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"
    #: Permanent Slack errors in a row (each dead-letters its page) after which /readyz
    #: reports delivery failing; a message Slack takes resets it (enricher.slack.health).
    slack_permanent_errors_unready: int = Field(default=3, ge=1)
    runbook_base_url: str | None = None

    # --- PagerDuty incident notes (enricher.notes, README "PagerDuty incident notes") ---
    #: A REST API key: with it, an incident from the PagerDuty webhook gets the match as a note.
    pagerduty_api_token: SecretStr | None = None
    #: The `From:` email of a valid PagerDuty user (an account-level key requires it).
    pagerduty_from: str | None = None
    pagerduty_api_url: str = "https://api.pagerduty.com"
    #: `matched` (a note when a runbook matched), `all` (also one naming the leads when
    #: none did) or `off`; unset: `matched` with PAGERDUTY_API_TOKEN, else `off`.
    pagerduty_notes: Literal["matched", "all", "off"] | None = None
    #: Where runbooks are read, per source: `[SOURCE=]TEMPLATE`, comma separated, with
    #: {path}, {path_noext}, {slug} and a final #{anchor} (ingest.weblink; never Confluence).
    runbook_link_template: str = ""
    #: The kind of git host behind a name: `[HOST=]KIND` (github, gitlab, bitbucket,
    #: bitbucket-server, gitea, azure), comma separated (ingest.weblink).
    runbook_git_web: str = ""

    # --- feedback and the runbook-gap report (docs/FEEDBACK.md) ---
    #: The Slack app's signing secret: every click on /slack/interactions is verified with it.
    slack_signing_secret: SecretStr | None = None
    #: How long a page's feedback buttons record votes (its alert is kept this long).
    feedback_page_ttl_s: int = Field(default=30 * 86400, ge=3600)
    #: Channel of the runbook-gap digest; unset, no digest is sent.
    gap_report_channel: str | None = None
    #: How often the digest goes out, covering that long (default weekly).
    gap_report_interval_s: float = Field(default=7 * 86400, ge=60)
    #: Link to create a missing runbook, `{path}` becoming `<service>/<AlertName>.md`
    #: (GitHub: `https://github.com/ORG/REPO/new/main?filename={path}`). Unset: the
    #: runbook's would-be address under RUNBOOK_BASE_URL.
    gap_runbook_new_url: str | None = None

    # --- reliability ---
    dedup_ttl_s: int = Field(default=6 * 3600, ge=60)
    job_claim_idle_s: float = Field(default=60.0, gt=0)
    #: How long a worker may hold a group's post claim before another takes over (after
    #: looking for the message in the channel). Must outlast one Slack call with retries.
    post_lease_s: float = Field(default=120.0, gt=0)
    #: Failed Slack deliveries before a job is dead-lettered: with backoff capped at 60 s,
    #: 200 attempts ride out about three hours of Slack outage.
    delivery_max_attempts: int = Field(default=200, ge=1)

    @field_validator(
        "alertmanager_bearer_tokens",
        "alertmanager_basic_auth",
        "pagerduty_signing_secrets",
        "grafana_signing_secrets",
        "runbook_roots",
        "redis_sentinels",
        "runbook_git_webhook_secrets",
        mode="before",
    )
    @classmethod
    def _commas(cls, value: object) -> object:
        return split_commas(value)

    @field_validator(
        "qdrant_url",
        "runbook_git_url",
        "runbook_base_url",
        "slack_channel",
        "gap_report_channel",
        "gap_runbook_new_url",
        "redis_sentinel_master",
        "pagerduty_from",
        "pagerduty_notes",
        mode="before",
    )
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator(
        "slack_bot_token", "slack_webhook_url", "qdrant_api_key", "slack_signing_secret",
        "redis_sentinel_password", "runbook_git_token", "pagerduty_api_token",
        mode="before",
    )
    @classmethod
    def _empty_secret_is_none(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("confluence_spaces", mode="before")
    @classmethod
    def _confluence_spaces(cls, value: object) -> object:
        return split_commas(value)

    @field_validator(
        "confluence_url", "confluence_label", "confluence_email", "confluence_api_token",
        "confluence_personal_token", mode="before",
    )
    @classmethod
    def _confluence_empty_is_none(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("confluence_label")
    @classmethod
    def _confluence_label(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or any(c in value for c in '"\\ ,')):
            raise ValueError("a Confluence label is one word without quotes, commas or spaces")
        return value

    @model_validator(mode="after")
    def _confluence_complete(self) -> Settings:
        if self.confluence_url is None:
            return self
        if not self.confluence_url.startswith(("https://", "http://")):
            raise ValueError("CONFLUENCE_URL must be the site's http(s) address")
        if not self.confluence_spaces:
            raise ValueError(
                "CONFLUENCE_URL is set but CONFLUENCE_SPACES is empty: name the space keys "
                "to index (comma separated); the whole site is never crawled"
            )
        cloud = self.confluence_email is not None and self.confluence_api_token is not None
        if cloud == (self.confluence_personal_token is not None):
            raise ValueError(
                "CONFLUENCE_URL needs one kind of credentials: CONFLUENCE_EMAIL and "
                "CONFLUENCE_API_TOKEN (Cloud) or CONFLUENCE_PERSONAL_TOKEN (Data Center), not both"
            )
        return self

    @property
    def confluence_configured(self) -> bool:
        return self.confluence_url is not None

    @field_validator("slack_webhook_url")
    @classmethod
    def _slack_webhook_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not is_http_url(value.get_secret_value()):
            raise ValueError(
                "not an http(s) URL; set it to the incoming webhook's https:// address from "
                "the Slack app's Incoming Webhooks page, or unset it"
            )
        return value

    @field_validator("slack_api_url")
    @classmethod
    def _slack_api_url(cls, value: str) -> str:
        if not is_http_url(value):
            raise ValueError(
                "not an http(s) URL; set it to the Web API's base address, "
                "https://slack.com/api/ (the default)"
            )
        # slack-sdk joins the method onto it: without the slash, /api would be replaced.
        return value if value.endswith("/") else value + "/"

    @field_validator("port")
    @classmethod
    def _tcp_port(cls, value: int) -> int:
        if not 1 <= value <= 65535:
            raise ValueError("not a TCP port; set a number from 1 to 65535")
        return value

    @field_validator("log_level")
    @classmethod
    def _log_level(cls, value: str) -> str:
        if value.upper() not in LOG_LEVELS:
            raise ValueError(f"not a log level; set one of {', '.join(LOG_LEVELS)}")
        return value.upper()

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str) -> str:
        try:
            parse_url(value)  # what the service reads it with (redis.asyncio from_url)
        except ValueError as exc:
            raise ValueError(
                f"not a Redis URL ({exc}); write it as redis://[:password@]host:port/db"
            ) from None
        return value

    @field_validator("redis_sentinels")
    @classmethod
    def _sentinel_addresses(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for address in value:
            host, _, port = address.rpartition(":")
            if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
                raise ValueError(
                    f"{address!r} is not host:port; list the Sentinels as host:port,host:port"
                )
        return value

    @field_validator("redis_sentinel_master")
    @classmethod
    def _sentinel_master_named(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("redis_sentinels") and not value:
            raise ValueError(
                "REDIS_SENTINELS is set but this is not: set it to the name the Sentinels "
                "monitor (`sentinel monitor <name> ...` in sentinel.conf)"
            )
        return value

    @property
    def redis_durable_ack(self) -> bool:
        """Whether 202 promises more than one Redis server's memory: with Sentinel or a
        replica ack, intake answers 503 rather than queueing in process when Redis fails."""
        return bool(self.redis_sentinels) or self.redis_min_replicas_ack > 0

    @property
    def basic_users(self) -> dict[str, str]:
        pairs = (entry.partition(":") for entry in self.alertmanager_basic_auth)
        return {user: password for user, _, password in pairs if user}

    @property
    def alertmanager_auth_configured(self) -> bool:
        return bool(self.alertmanager_bearer_tokens or self.basic_users)

    @property
    def pagerduty_notes_mode(self) -> Literal["matched", "all", "off"]:
        """PAGERDUTY_NOTES as it applies: unset is `matched` with a token, else `off`."""
        if self.pagerduty_notes is not None:
            return self.pagerduty_notes
        return "matched" if self.pagerduty_api_token is not None else "off"

    @model_validator(mode="after")
    def _pagerduty_notes_need_a_token(self) -> Settings:
        if self.pagerduty_notes in ("matched", "all") and self.pagerduty_api_token is None:
            raise ValueError(
                f"PAGERDUTY_NOTES={self.pagerduty_notes} needs PAGERDUTY_API_TOKEN (a REST API "
                "key); set it, or PAGERDUTY_NOTES=off"
            )
        if not is_http_url(self.pagerduty_api_url):
            raise ValueError("PAGERDUTY_API_URL must be an http(s) address")
        return self

    @property
    def pagerduty_auth_configured(self) -> bool:
        return bool(self.pagerduty_signing_secrets)

    @property
    def open_endpoints(self) -> tuple[str, ...]:
        """The webhooks served without credentials: ALLOW_UNAUTHENTICATED opens only those
        with none configured, so a configured token or secret is always enforced."""
        if not self.allow_unauthenticated:
            return ()
        configured = {
            "/webhook/alertmanager": self.alertmanager_auth_configured,
            "/webhook/pagerduty": self.pagerduty_auth_configured,
            "/webhook/grafana": bool(self.grafana_signing_secrets),
        }
        return tuple(path for path, has_credentials in configured.items() if not has_credentials)


def load_settings(**values: Any) -> Settings:
    """Settings from the environment (and `values`, which win); ConfigError naming each bad
    variable and what it needs."""
    try:
        return Settings(**values)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            name = str(error["loc"][0]).upper() if error["loc"] else "settings"
            value = error.get("input")
            # A whole-settings check (no loc) has every variable as its input: never shown.
            secret = not error["loc"] or any(
                word in name for word in ("SECRET", "TOKEN", "AUTH", "KEY", "URL")
            )
            shown = "" if secret else f"={value!r}"
            # Our validators' messages (ValueError) are written to be shown as they are.
            cause = error.get("ctx", {}).get("error")
            message = str(cause) if error["type"] == "value_error" else error["msg"].lower()
            problems.append(f"{name}{shown[:60]}: {message}")
        raise ConfigError(
            "bad setting in the environment: " + "; ".join(problems)
            + " (see the settings table in README.md)"
        ) from None


__all__ = ["LOG_LEVELS", "CommaList", "Settings", "load_settings", "split_commas"]
