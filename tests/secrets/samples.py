"""Fake but format-valid credentials, built at test time (never real keys).

``samples(seed)`` gives (rule, line, value) triples: ``line`` is how the value
appears in a text, ``value`` the part a scan must report and redact.
"""

from __future__ import annotations

import base64
import json
import random
import string

ALNUM = string.ascii_letters + string.digits
LOWER_HEX = "0123456789abcdef"
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _pem(rng: random.Random, kind: str) -> str:
    body = "\n".join("".join(rng.choices(B64, k=64)) for _ in range(4))
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"


def samples(seed: int = 24) -> list[tuple[str, str, str]]:
    """Every rule family: (rule id, line holding the value, the value)."""
    rng = random.Random(seed)

    def r(alphabet: str, k: int) -> str:
        return "".join(rng.choices(alphabet, k=k))

    def plain(rule: str, value: str, before: str = "the key is ", after: str = " (do not share)"):
        return rule, f"{before}{value}{after}", value

    jwt = ".".join([_b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()),
                    _b64url(json.dumps({"sub": r(ALNUM, 12), "iat": 1764547200}).encode()),
                    _b64url(rng.randbytes(32))])
    password = r(ALNUM, 18)
    aws_secret = r(ALNUM, 38) + "+/"
    npm = "npm_" + r(ALNUM, 36)
    pem_rsa, pem_ssh = _pem(rng, "RSA PRIVATE KEY"), _pem(rng, "OPENSSH PRIVATE KEY")
    pem_enc = _pem(rng, "ENCRYPTED PRIVATE KEY")
    return [
        plain("artifactory", "AKC" + r(ALNUM, 70)),
        plain("aws-key", "AKIA" + r(string.ascii_uppercase + string.digits, 16)),
        ("aws-key", f'aws_secret_access_key = "{aws_secret}"', aws_secret),
        plain("azure-storage-key", "AccountKey=" + r(B64, 86) + "=="),
        ("basic-auth-url", f"git clone https://deploy:{password}@git.internal.net/app.git",
         password),
        plain("discord-bot-token",
              "N" + r(URLSAFE, 23) + "." + r(URLSAFE, 6) + "." + r(URLSAFE, 27)),
        plain("github-token", "ghp_" + r(ALNUM, 36)),
        plain("github-token", "ghs_" + r(ALNUM, 36)),
        plain("gitlab-token", "glpat-" + r(URLSAFE, 20)),
        plain("jwt", jwt, before="Authorization: Bearer ", after=""),
        plain("mailchimp-key", r(LOWER_HEX, 32) + "-us14"),
        ("npm-token", f"//registry.npmjs.org/:_authToken={npm}", npm),
        plain("openai-key", "sk-proj-" + r(ALNUM, 20) + "T3BlbkFJ" + r(ALNUM, 20)),
        ("private-key", pem_rsa, pem_rsa),
        ("private-key", pem_ssh, pem_ssh),
        plain("pypi-token", "pypi-AgEIcHlwaS5vcmc" + r(URLSAFE, 80)),
        plain("sendgrid-key", "SG." + r(URLSAFE, 22) + "." + r(URLSAFE, 43)),
        plain("slack-token", f"xoxb-{r(string.digits, 12)}-{r(string.digits, 13)}-"
                             + r(string.ascii_lowercase + string.digits, 24)),
        plain("slack-token", f"https://hooks.slack.com/services/T{r(string.ascii_uppercase, 8)}"
                             f"/B{r(string.ascii_uppercase, 8)}/{r(ALNUM, 24)}"),
        plain("square-oauth-secret", "sq0csp-" + r(URLSAFE, 43)),
        plain("stripe-key", "sk_live_51" + r(ALNUM, 97)),
        plain("telegram-bot-token", r(string.digits, 10) + ":" + r(URLSAFE, 35)),
        plain("twilio-key", "SK" + r(LOWER_HEX, 32)),
        plain("anthropic-key", "sk-ant-api03-" + r(URLSAFE, 93) + "AA"),
        plain("google-api-key", "AIza" + r(URLSAFE, 35)),
        plain("google-oauth-secret", "GOCSPX-" + r(URLSAFE, 28)),
        plain("github-fine-grained-token", "github_pat_" + r(ALNUM, 22) + "_" + r(ALNUM, 59)),
        plain("huggingface-token", "hf_" + r(string.ascii_letters, 34)),
        plain("digitalocean-token", "dop_v1_" + r(LOWER_HEX, 64)),
        plain("age-secret-key", "AGE-SECRET-KEY-1" + r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
        ("encrypted-private-key", pem_enc, pem_enc),
    ]
