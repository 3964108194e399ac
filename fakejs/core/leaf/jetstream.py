"""JetStream across a leaf connection: the denies every link of an account gets, and the domain's API subjects.

nats-server keeps each side's JetStream API to itself: every leaf
connection of an account (not the system account) denies ``$JS.API.>``,
``$KV.>`` and ``$OBJ.>`` both ways (interest on them is neither told nor
taken, messages on them are not sent).  A server with JetStream and a
domain maps ``$JS.<domain>.API.<...>`` onto its own API and tells its
leaf connections of those subjects, so a client on the other side reaches
it by domain; when the two sides' domains differ (or this side has no
JetStream and no domain) the link also sends nothing on
``$JS.<own domain>.API.>``, a guard against two servers with one domain.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fakejs.core.subjects import matches

__all__ = ["DENY_CLIENT_JETSTREAM", "JETSTREAM_API", "LinkDenies", "domain_api_mappings", "link_denies"]

# The account's JetStream API (a hub tells its leaves of it; they deny it).
JETSTREAM_API = "$JS.API.>"
# nats-server's denyAllClientJs: the account's JetStream API, KV and object store subjects.
DENY_CLIENT_JETSTREAM = (JETSTREAM_API, "$KV.>", "$OBJ.>")

# What ``$JS.<domain>.API.`` followed by each of these is mapped onto (nats-server's generateJSMappingTable).
_DOMAIN_API_TARGETS = {
    "INFO": "$JS.API.INFO",
    "STREAM.>": "$JS.API.STREAM.>",
    "CONSUMER.>": "$JS.API.CONSUMER.>",
    "DIRECT.>": "$JS.API.DIRECT.>",
    "META.>": "$JS.API.META.>",
    "SERVER.>": "$JS.API.SERVER.>",
    "ACCOUNT.>": "$JS.API.ACCOUNT.>",
    "$KV.>": "$KV.>",
    "$OBJ.>": "$OBJ.>",
}


def domain_api_mappings(domain: str) -> dict[str, str]:
    """The subject mappings a JetStream ``domain`` adds to an account: source -> target."""
    return {f"$JS.{domain}.API.{suffix}": target for suffix, target in _DOMAIN_API_TARGETS.items()}


@dataclass(frozen=True)
class LinkDenies:
    """What one leaf connection does not carry: ``publish`` out to the remote, ``subscribe`` interest either way."""

    publish: tuple[str, ...] = ()
    subscribe: tuple[str, ...] = ()
    dollar_only: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Every deny under ``$``: a message on any other subject passes with one character compared.
        object.__setattr__(self, "dollar_only", all(deny.startswith("$") for deny in self.publish))

    def publish_denied(self, subject: str) -> bool:
        if self.dollar_only and not subject.startswith("$"):
            return False
        return any(matches(deny, subject) for deny in self.publish)

    def subscribe_denied(self, subject: str) -> bool:
        """Whether interest on ``subject`` (wildcards taken as written) is neither told nor taken."""
        return any(matches(deny, subject) for deny in self.subscribe)


def link_denies(local_domain: str, remote_domain: str, jetstream: bool) -> tuple[LinkDenies, bool]:
    """The JetStream denies of a link of the global account, and whether the domains are kept apart.

    Kept apart (nats-server logs ``JetStream using domains``) when the
    domains differ, or when this side has neither JetStream nor a domain.
    """
    apart = local_domain != remote_domain or (not jetstream and not local_domain)
    own_api = (f"$JS.{local_domain}.API.>",) if apart and local_domain and jetstream else ()
    return LinkDenies(DENY_CLIENT_JETSTREAM + own_api, DENY_CLIENT_JETSTREAM), apart
