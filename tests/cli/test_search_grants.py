"""``minara search --role``: a domain whose grant is ``none`` gives that role no hits."""

from __future__ import annotations


def propose(minara, domain: str, content: str) -> None:
    minara("fact", "propose", "--domain", domain, "--topic", "deploys", "--content", content,
           "--as", "agent-a", check=0)


def paths(result: dict) -> set[str]:
    return {hit["path"].split("/")[1] for hit in result["results"]
            if hit["path"].startswith("knowledge/")}


def test_a_role_without_access_to_a_domain_finds_none_of_its_facts(minara):
    propose(minara, "infra", "Deploys happen on Tuesdays.")
    propose(minara, "hr", "Salary deploys reach staff on the 25th.")
    minara("memory", "set", "wiki/deploys/deploys.md", "# Deploys\n\nhow deploys work\n",
           check=0)
    minara("grant", "set", "ops", "hr", "none", "--as", "dana", check=0)
    minara("grant", "set", "general", "infra", "none", "--as", "dana", check=0)

    assert paths(minara.json("search", "deploys", "--role", "ops")) == {"infra"}
    assert paths(minara.json("search", "deploys", "--role", "ops", "--mode", "keyword",
                             "--path", "knowledge/hr")) == set()
    assert paths(minara.json("search", "deploys")) == {"hr"}  # no role: general
    assert paths(minara.json("search", "deploys", "--role", "qa")) == {"infra", "hr"}
    # the rest of the workspace is not affected
    hits = minara.json("search", "deploys", "--role", "ops")["results"]
    assert "wiki/deploys/deploys.md" in {h["path"] for h in hits}
    text = minara("memory", "search", "Salary", "--role", "ops", check=0).stdout
    assert "knowledge/hr" not in text
