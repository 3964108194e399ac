"""The accounts of the cluster import tests: one exports a stream and a service, another imports both."""

from __future__ import annotations

ACCOUNTS = """
no_auth_user: probe
accounts {
  P { users: [{user: probe, password: probe}] }
  A {
    users: [{user: a, password: a}]
    exports: [{stream: "ev.>"}, {service: "svc.>"}]
  }
  B {
    users: [{user: b, password: b}]
    imports: [
      {stream: {account: A, subject: "ev.>"}, prefix: "from.a"}
      {service: {account: A, subject: "svc.>"}, to: "remote.>"}
    ]
  }
}
"""
