"""Work put off while a client read is applied: run before what could see it, and at the read's end."""

from __future__ import annotations

from fakejs.core.read_deferrals import ReadDeferrals


def test_work_put_off_runs_in_order_once_and_leaves_nothing_queued() -> None:
    deferrals = ReadDeferrals()
    done: list[str] = []
    deferrals.put_off("a", lambda: done.append("a"), "$JS.API.CONSUMER.MSG.NEXT.S.A")
    deferrals.put_off("b", lambda: done.append("b"), "$JS.API.CONSUMER.MSG.NEXT.S.B")
    deferrals.put_off("a", lambda: done.append("a again"), "$JS.API.CONSUMER.MSG.NEXT.S.A")  # one per owner
    assert deferrals.queued
    deferrals.run()
    assert done == ["a again", "b"] and not deferrals.queued
    deferrals.run()
    assert done == ["a again", "b"]


def test_acks_and_the_kept_subjects_do_not_run_it_anything_else_does() -> None:
    deferrals = ReadDeferrals()
    done: list[str] = []
    deferrals.put_off("c", lambda: done.append("c"), "$JS.API.CONSUMER.MSG.NEXT.S.C")
    deferrals.before("$JS.ACK.S.C.1.2.2.1700000000000000000.0")
    deferrals.before("$JS.API.CONSUMER.MSG.NEXT.S.C")
    assert done == [] and deferrals.queued
    deferrals.before("$JS.API.CONSUMER.MSG.NEXT.S.D")  # another consumer's pull
    assert done == ["c"] and not deferrals.queued
    deferrals.put_off("c", lambda: done.append("c"), "$JS.API.CONSUMER.MSG.NEXT.S.C")
    deferrals.before("$JS.API.CONSUMER.INFO.S.C")
    assert done == ["c", "c"]


def test_an_owner_that_does_its_work_itself_is_forgotten() -> None:
    deferrals = ReadDeferrals()
    done: list[str] = []
    deferrals.put_off("a", lambda: done.append("a"), "keep.a")
    deferrals.put_off("b", lambda: done.append("b"), "keep.b")
    deferrals.forget("a")
    assert deferrals.queued
    deferrals.run()
    assert done == ["b"]
    deferrals.put_off("a", lambda: done.append("a"), "keep.a")
    deferrals.forget("a")
    assert not deferrals.queued
    deferrals.before("anything")  # nothing kept from before: nothing runs, nothing fails
    assert done == ["b"]


def test_work_put_off_while_running_runs_too() -> None:
    deferrals = ReadDeferrals()
    done: list[str] = []

    def first() -> None:
        done.append("first")
        deferrals.put_off("second", lambda: done.append("second"), "keep.second")

    deferrals.put_off("first", first, "keep.first")
    deferrals.run()
    assert done == ["first", "second"] and not deferrals.queued
