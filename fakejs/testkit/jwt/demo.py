"""Ready-made operator-mode credentials: an operator, its system account, an account with JetStream and a user.

:class:`DemoCredentials` is what the pytest plugin's ``@pytest.mark.fakejs(operator=True)``
and the command line's ``--demo_credentials DIR`` serve: :meth:`DemoCredentials.mint`
makes them (in memory), :meth:`DemoCredentials.write` puts the server's
configuration and the user's ``.creds`` in a directory.  :func:`demo_files`
is the command line's: it writes them unless the directory already holds
them, so a restart (or a reload) serves the same credentials.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from fakejs.testkit.jwt.issuers import Account, Operator, User

CONFIG_NAME = "server.conf"
CREDS_NAME = "user.creds"
OPERATOR_NAME = "operator.jwt"


@dataclass(frozen=True)
class DemoFiles:
    """Where the credentials were written: the server's configuration, the user's ``.creds``, the operator JWT."""

    config_file: Path
    creds_file: Path
    operator_file: Path


@dataclass
class DemoCredentials:
    """An operator (``fakejs``), its system account (``SYS``), an account with JetStream (``APP``) and its user ``demo``.

    ``files`` says where :meth:`write` put them (None until then).
    """

    operator: Operator
    system_account: Account
    account: Account
    user: User
    files: DemoFiles | None = field(default=None)

    @property
    def creds_file(self) -> Path:
        """The user's ``.creds`` file, once written."""
        if self.files is None:
            raise RuntimeError("the demo credentials are not written yet: call write(directory)")
        return self.files.creds_file

    @classmethod
    def mint(cls) -> DemoCredentials:
        """Fresh keys and JWTs: ``APP`` has JetStream without limits, ``demo`` may do anything in it."""
        operator = Operator("fakejs")
        system = operator.account("SYS")
        operator.system_account = system.public_key
        account = operator.account("APP", jetstream=True)
        return cls(operator, system, account, account.user("demo"))

    def server_config(self, store_dir: str | os.PathLike[str] | None = None) -> str:
        """The operator-mode configuration (the operator JWT, ``system_account``, a preloaded MEMORY resolver).

        With ``store_dir``, JetStream is enabled, its files there.
        """
        accounts = [self.system_account, self.account]
        config = self.operator.server_config(system_account=self.system_account, accounts=accounts)
        if store_dir is not None:
            config += f"jetstream {{ store_dir: {json.dumps(str(store_dir))} }}\n"
        return config

    def write(self, directory: str | os.PathLike[str]) -> DemoFiles:
        """Write the configuration (JetStream in ``jetstream/`` there), the user's ``.creds`` and the operator JWT.

        ``directory`` is made if missing.
        """
        where = Path(directory).absolute()
        where.mkdir(parents=True, exist_ok=True)
        files = DemoFiles(where / CONFIG_NAME, where / CREDS_NAME, where / OPERATOR_NAME)
        files.config_file.write_text(self.server_config(where / "jetstream"))
        self.user.write_creds(files.creds_file)
        files.operator_file.write_text(self.operator.jwt)
        self.files = files
        return files


def demo_files(directory: str | os.PathLike[str]) -> tuple[DemoFiles, bool]:
    """The credentials in ``directory``, written now unless it holds them already; and whether they were written."""
    where = Path(directory).absolute()
    files = DemoFiles(where / CONFIG_NAME, where / CREDS_NAME, where / OPERATOR_NAME)
    if files.config_file.is_file() and files.creds_file.is_file():
        return files, False
    return DemoCredentials.mint().write(where), True
