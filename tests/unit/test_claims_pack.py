"""A full resolver's pack sync without a server: the periodic request on the clock, and the merge of the answers."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import pytest

from fakejs.core.jwt.directory import DirectoryStore
from fakejs.core.router import Router
from fakejs.monitoring.claims_pack import PACK, PackSync, directory_hash
from fakejs.testkit.clock import ManualClock
from fakejs.testkit.jwt import Operator

NOW = 1_700_000_000.0


class SystemAccount:
    """The system account as the sync sees it: its router."""

    def __init__(self) -> None:
        self.router = Router(random.Random(1))


class Sync:
    """A sync over a directory, with the requests it sends and the JWTs it applies."""

    def __init__(self, tmp_path: Path) -> None:
        self.clock = ManualClock()
        self.account = SystemAccount()
        self.store = DirectoryStore(str(tmp_path))
        self.requests: list[tuple[str, bytes]] = []
        self.applied: list[str] = []
        self.account.router.subscribe_internal(
            PACK, lambda s, reply, h, payload, o: self.requests.append((reply, payload))
        )
        self.sync = PackSync(
            self.account,  # type: ignore[arg-type]
            self.store,
            self.clock,
            random.Random(2),
            logging.getLogger("test"),
            10.0,
            lambda key, token: self.applied.append(key),
        )

    def answer(self, payload: bytes) -> None:
        self.account.router.publish(self.sync.inbox, "", None, payload)


def test_a_pack_request_goes_out_every_interval_with_the_directory_hash(tmp_path: Path) -> None:
    sync = Sync(tmp_path)
    sync.clock.advance(9.9)
    assert sync.requests == []
    sync.clock.advance(0.1)
    assert sync.requests == [(sync.sync.inbox, directory_hash(sync.store))]
    sync.clock.advance(10)
    assert len(sync.requests) == 2
    sync.sync.stop()
    sync.clock.advance(10)
    assert len(sync.requests) == 2


def test_an_answer_is_merged_unless_older(tmp_path: Path) -> None:
    sync = Sync(tmp_path)
    times = [NOW]
    app = Operator("O", now=lambda: times[0]).account("APP")
    old_token = app.jwt
    times[0] = NOW + 10
    new_token = app.jwt
    sync.answer(f"{app.public_key}|{new_token}".encode())
    assert sync.store.load(app.public_key) == new_token and sync.applied == [app.public_key]
    sync.answer(f"{app.public_key}|{old_token}".encode())  # issued earlier: the directory keeps its own
    assert sync.store.load(app.public_key) == new_token and sync.applied == [app.public_key]
    sync.answer(b"")  # the end of an answer


@pytest.mark.parametrize("line", ["no separator", "a|b|c", "NOTAKEY|x"])
def test_a_malformed_pack_line_is_not_merged(tmp_path: Path, line: str, caplog: pytest.LogCaptureFixture) -> None:
    sync = Sync(tmp_path)
    sync.answer(line.encode())
    assert sync.store.public_keys() == []
    assert "DirResolver - Merging resulted in error" in caplog.text
