"""What a leaf connection may carry each way (fakejs.core.leaf.permissions)."""

from __future__ import annotations

from fakejs.core.leaf.permissions import hub_permissions, leaf_permissions
from fakejs.core.users import Permissions, SubjectPermission


def test_a_remote_without_deny_lists_has_no_permissions() -> None:
    assert leaf_permissions([], []) is None
    assert hub_permissions(None, None) is None


def test_the_leaf_keeps_its_deny_lists() -> None:
    permissions = leaf_permissions(["di.>"], ["de.>"])
    assert permissions is not None
    assert not permissions.may_receive("di.x") and permissions.may_receive("de.x")
    assert not permissions.may_send("de.x") and permissions.may_send("di.x")
    assert permissions.may_receive(">")  # a deny does not refuse a wider wildcard


def test_an_overlapping_wildcard_starts_the_deny_filter_on_what_the_leaf_sends() -> None:
    permissions = leaf_permissions(["di.>"], [])
    assert permissions is not None
    permissions.remote_interest("ok.x", "")
    assert permissions.may_deliver("di.x")  # no wildcard yet
    permissions.remote_interest("*.x", "")
    assert not permissions.may_deliver("di.x") and permissions.may_deliver("ok.x")


def test_the_hub_swaps_its_users_lists_and_says_them_in_info() -> None:
    user = Permissions(publish=SubjectPermission(deny=("np.>",)), subscribe=SubjectPermission(allow=("in.>",)))
    permissions = hub_permissions(user, ["di.>"])
    assert permissions is not None
    assert permissions.info == {"import": {"allow": ["in.>"]}, "export": {"deny": ["np.>"]}}
    # sent: what the user may subscribe to, less the leaf's deny_pub; received: what it may publish
    assert permissions.may_send("in.x") and not permissions.may_send("out.x") and not permissions.may_send("di.x")
    assert permissions.may_receive("out.x") and not permissions.may_receive("np.x")
    assert permissions.may_deliver("in.di")  # the hub has no delivery filter of its own lists


def test_the_hubs_lists_add_to_the_leafs() -> None:
    permissions = leaf_permissions(["di.>"], [])
    assert permissions is not None
    merged = permissions.with_hub_lists({"import": {"deny": ["ns.>"]}, "export": {"allow": ["up.>"]}})
    assert not merged.may_receive("ns.x") and not merged.may_receive("di.x") and merged.may_receive("ok.x")
    assert merged.may_send("up.x") and not merged.may_send("other.x")
    assert permissions.with_hub_lists({"leafnode_urls": []}) is permissions
