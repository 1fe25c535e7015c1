"""The rule set: detect-secrets' prefix-anchored plugins, plus a few formats it lacks.

Rules come from detect-secrets (Yelp), read as data: each enabled plugin's
compiled ``denylist`` patterns are searched over the whole text, and a
candidate is confirmed by the plugin's own ``analyze_string`` (so checks such
as the JWT's formal validity stay theirs). Only plugins anchored on a token's
published shape are enabled; the keyword and high-entropy plugins are not,
since they flag commit ids, sha256 digests and uuids that minarad writes all
the time.

``OUR_RULES`` are formats detect-secrets does not know (Anthropic, Google,
GitHub fine-grained tokens, ...), written here from the vendors' published
prefixes and clearly ours.

Importing detect-secrets costs about 0.1 s (it imports ``requests``), more than
a whole CLI write. So the plugins' patterns are kept, once read, in a small
cache file per detect-secrets version (in the user's cache folder), and a
plugin is imported only to confirm a candidate its pattern found: a text
holding no candidate never imports detect-secrets.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: (module under ``detect_secrets.plugins``, class, rule id, group holding the value).
#: Group 0 is the whole match; 1 is group 1 in the patterns that have one (the
#: password of a URL, npm's token, the AWS secret key after its name).
DETECT_SECRETS_PLUGINS: tuple[tuple[str, str, str, int], ...] = (
    ("artifactory", "ArtifactoryDetector", "artifactory", 0),
    ("aws", "AWSKeyDetector", "aws-key", 1),
    ("azure_storage_key", "AzureStorageKeyDetector", "azure-storage-key", 0),
    ("basic_auth", "BasicAuthDetector", "basic-auth-url", 1),
    ("discord", "DiscordBotTokenDetector", "discord-bot-token", 0),
    ("github_token", "GitHubTokenDetector", "github-token", 0),
    ("gitlab_token", "GitLabTokenDetector", "gitlab-token", 0),
    ("jwt", "JwtTokenDetector", "jwt", 0),
    ("mailchimp", "MailchimpDetector", "mailchimp-key", 0),
    ("npm", "NpmDetector", "npm-token", 1),
    ("openai", "OpenAIDetector", "openai-key", 0),
    ("private_key", "PrivateKeyDetector", "private-key", 0),
    ("pypi_token", "PypiTokenDetector", "pypi-token", 0),
    ("sendgrid", "SendGridDetector", "sendgrid-key", 0),
    ("slack", "SlackDetector", "slack-token", 0),
    ("square_oauth", "SquareOAuthDetector", "square-oauth-secret", 0),
    ("stripe", "StripeDetector", "stripe-key", 0),
    ("telegram_token", "TelegramBotTokenDetector", "telegram-bot-token", 0),
    ("twilio", "TwilioKeyDetector", "twilio-key", 0),
)

#: Ours (not in detect-secrets): rule id -> pattern, from each vendor's published format.
OUR_RULES: dict[str, str] = {
    "anthropic-key": r"sk-ant-(?:api03|admin01)-[A-Za-z0-9_-]{93}AA",
    "google-api-key": r"AIza[0-9A-Za-z_-]{35}",
    "google-oauth-secret": r"GOCSPX-[A-Za-z0-9_-]{28}",
    "github-fine-grained-token": r"github_pat_[A-Za-z0-9_]{82}",
    "huggingface-token": r"hf_[A-Za-z]{34}",
    "digitalocean-token": r"do[por]_v1_[a-f0-9]{64}",
    "age-secret-key": r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    "encrypted-private-key": r"BEGIN ENCRYPTED PRIVATE KEY",
}

#: Cheap necessary conditions for patterns that are slow to run over a whole
#: text (Artifactory's take 3 ms per 100 KB; npm's is quadratic in a line of
#: slashes, 7 s for 20 KB of them): a pattern runs only when one of
#: its rule's gates holds. A gate is a literal of the text, ``i:`` a literal of
#: the lowered text, ``re:`` a regular expression starting with a literal. Each
#: pattern keeps the gates whose literal its own source spells (none: it always
#: runs); the samples in the tests check that every gate lets its tokens through.
GATES: dict[str, tuple[str, ...]] = {
    "artifactory": (r"re:AKC[a-zA-Z0-9]{10}", r"re:AP[\dABCDEF][a-zA-Z0-9]{8}"),
    "aws-key": ("A3T", "ABIA", "ACCA", "AKIA", "ASIA", "i:aws"),
    "discord-bot-token": (r"re:\.[a-zA-Z\d_-]{6}\.",),
    "mailchimp-key": (r"re:-us[0-9]",),
    "npm-token": ("_authToken=",),
    "slack-token": ("i:xox", "i:hooks.slack.com"),
    "stripe-key": ("k_live_",),
    "telegram-bot-token": (r"re::[0-9A-Za-z_-]{35}",),
}

#: Rules whose match is a header: the value runs to the block's END line.
PEM_RULES = frozenset({"private-key", "encrypted-private-key"})

#: Every rule id, for the allowlist's checks (no import of detect-secrets needed).
RULE_IDS = frozenset([rule for _, _, rule, _ in DETECT_SECRETS_PLUGINS] + list(OUR_RULES))


@dataclass(frozen=True)
class Rule:
    """One pattern of a rule, compiled on first use.

    A gated pattern is compiled only once a text meets one of its gates
    (ordinary notes meet few): a fresh process that scans one text compiles
    only the patterns it runs.

    Attributes:
        id: the rule id users see (``github-token``).
        source: the pattern, searched over the whole text (``^``/``$`` per line
            when ``flags`` hold ``re.MULTILINE``).
        flags: the pattern's ``re`` flags.
        wanted_group: the group holding the value (0: the whole match); see :attr:`group`.
        confirm: the plugin's own check of a whole match, or None.
    """

    id: str
    source: str
    flags: int
    wanted_group: int
    confirm: Callable[[str], bool] | None
    gate: tuple[str, ...] = ()

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern (compiled once per process)."""
        return _compiled(self.source, self.flags)

    @property
    def group(self) -> int:
        """The group holding the value, 0 when the pattern has no such group."""
        return min(self.wanted_group, self.pattern.groups)

    def may_match(self, text: str, lowered: Callable[[], str]) -> bool:
        """False when ``text`` meets none of the pattern's gates."""
        return not self.gate or any(_gate_holds(g, text, lowered) for g in self.gate)


@functools.lru_cache(maxsize=1)
def load_rules() -> tuple[Rule, ...]:
    """All enabled rules, read once per process (each compiled on first use).

    The plugins' patterns come from the cache file when it is there (see the
    module's docstring), else from detect-secrets, which then writes it.
    """
    rules: list[Rule] = []
    for (module, cls, rule_id, group), sources in zip(DETECT_SECRETS_PLUGINS,
                                                      _plugin_patterns(), strict=True):
        confirm = _confirmer(module, cls)
        for source, flags in sources:
            rules.append(Rule(rule_id, source, flags | re.MULTILINE,  # plugins scan by line
                              group, confirm, _gate(rule_id, source)))
    for rule_id, source in OUR_RULES.items():
        rules.append(Rule(rule_id, source, 0, 0, None))
    return tuple(rules)


def _plugin_patterns() -> list[list[tuple[str, int]]]:
    """Each plugin's ``denylist`` as (source, flags), from the cache file or the plugins."""
    cache = _cache_file()
    if cache is not None:
        try:
            with open(cache, encoding="utf-8") as fh:
                cached: Any = json.load(fh)
            if isinstance(cached, list) and len(cached) == len(DETECT_SECRETS_PLUGINS):
                return [[(str(src), int(flags)) for src, flags in plugin] for plugin in cached]
        except (OSError, ValueError, TypeError):
            pass  # missing or damaged: read the plugins again
    read = [[(p.pattern, p.flags) for p in _plugin(module, cls).denylist]
            for module, cls, _, _ in DETECT_SECRETS_PLUGINS]
    if cache is not None:
        _write_cache(cache, read)
    return read


def rules_cache_file() -> str | None:
    """The patterns' cache file for the installed detect-secrets (None: not installed)."""
    return _cache_file()


def _cache_file() -> str | None:
    """The patterns' cache file for the installed detect-secrets (None: not installed).

    Its name holds the installed package's place and modification time, so
    an upgrade reads the plugins again (``importlib.metadata`` would cost
    more than the import it saves).
    """
    import hashlib
    from importlib.util import find_spec

    spec = find_spec("detect_secrets")
    if spec is None or not spec.origin:
        return None
    try:
        stamp = os.stat(os.path.join(os.path.dirname(spec.origin), "plugins")).st_mtime_ns
    except OSError:
        return None
    key = hashlib.sha256(f"{spec.origin}\0{stamp}".encode()).hexdigest()[:16]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "minara", f"secret-rules-{key}.json")


def _write_cache(path: str, patterns: list[list[tuple[str, int]]]) -> None:
    """Write the cache atomically; a folder that cannot be written only costs speed."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temp = f"{path}.{os.getpid()}.tmp"
        with open(temp, "w", encoding="utf-8") as fh:
            json.dump(patterns, fh)
        os.replace(temp, path)
    except OSError:
        pass


@functools.cache
def _plugin(module: str, cls: str) -> Any:
    """The detect-secrets plugin (imports detect-secrets on first use)."""
    return getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls)()


def _gate(rule_id: str, source: str) -> tuple[str, ...]:
    """The gates of ``rule_id`` whose literal the pattern ``source`` spells."""
    spelt = source.replace("\\", "").lower()
    return tuple(g for g in GATES.get(rule_id, ()) if _literal(g) in spelt)


def _literal(gate: str) -> str:
    """The literal a gate starts with, lowered, without escapes."""
    body = gate.removeprefix("i:").removeprefix("re:")
    if gate.startswith("re:"):
        body = re.split(r"[\[({?*+]", body.replace("\\.", "."), maxsplit=1)[0]
    return body.lower()


def _gate_holds(gate: str, text: str, lowered: Callable[[], str]) -> bool:
    if gate.startswith("i:"):
        return gate[2:] in lowered()
    if gate.startswith("re:"):
        return _compiled(gate[3:], 0).search(text) is not None
    return gate in text


@functools.cache
def _compiled(source: str, flags: int) -> re.Pattern[str]:
    return re.compile(source, flags)


def _confirmer(module: str, cls: str) -> Callable[[str], bool]:
    """A check that the plugin itself still reports ``text`` (e.g. a JWT that decodes)."""
    def confirm(text: str) -> bool:
        return any(True for _ in _plugin(module, cls).analyze_string(text))
    return confirm
