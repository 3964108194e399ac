"""Who the members of a group are on the wire: peer ids, and the subject each member listens on.

A member is named by nats-server's peer id: the 8-character hash of its
server's name (:func:`peer_id`, nats-server's ``getHash``), the same on every
server of the cluster.  Each member of group ``G`` listens in the system
account on ``$FJRG.G.<peer>`` (:func:`member_subject`); a peer's message to
it is published there and crosses the routes like any system-account message.
The prefix is fakejs's own: nats-server's groups speak on ``$NRG.``, in
another format, and the two must never be taken for each other.
"""

from __future__ import annotations

from fakejs.core.subjects import is_valid_literal_subject, is_valid_subject
from fakejs.gocompat.ids import get_hash

SUBJECT_PREFIX = "$FJRG."


class InvalidGroupName(ValueError):
    """A group name that is not one literal subject token (empty, with a dot or a blank, or a wildcard)."""


def peer_id(server_name: str) -> str:
    """A server's peer id in every group it is a member of (nats-server's ``getHash`` of its name)."""
    return get_hash(server_name)


def check_group_name(name: str) -> str:
    """``name`` if it can name a group (one literal subject token: nats-server's ``_meta_``, ``S-R3F-...``),
    else :class:`InvalidGroupName`."""
    valid = is_valid_subject(name, check_runes=True) and is_valid_literal_subject(name)
    if not valid or "." in name:
        raise InvalidGroupName(f"a group name is one subject token without wildcards, not {name!r}")
    return name


def member_subject(group: str, peer: str) -> str:
    """The subject the member ``peer`` of ``group`` listens on."""
    return f"{SUBJECT_PREFIX}{group}.{peer}"
