// Pinned-client failover seen through @nats-io/jetstream's consume().
//
// Usage: node pinned_failover.mjs <nats url>
// Prints one JSON document on stdout (the Python test asserts on it) and
// exits 0, or prints {"error": ..., "state": ...} and exits 1.
//
// A consumes first and is pinned; B's pulls carry no pin id and wait.  After
// $JS.API.CONSUMER.UNPIN, A's waiting pull still carries the old id: the
// server answers it 423 (A sees "consumer_unpinned") and pins B instead.

import { connect, nanos } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";

const url = process.argv[2];
const WAIT_MS = 10_000;

const nc = await connect({ servers: url });
const state = { a: null, b: null };

async function until(cond, what) {
  const end = Date.now() + WAIT_MS;
  while (!(await cond())) {
    if (Date.now() > end) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function start(js, name) {
  const consumer = await js.consumers.get("S", "C");
  // max_messages 100: after a few messages the client stays above its refill
  // threshold, so each client has exactly one pull outstanding.
  const iter = await consumer.consume({ group: "A", max_messages: 100, expires: 30_000 });
  const client = { name, iter, msgs: [], events: [] };
  (async () => {
    for await (const s of iter.status()) {
      if (s.type === "consumer_pinned") client.events.push({ type: s.type, id: s.id });
      else if (s.type === "consumer_unpinned") client.events.push({ type: s.type });
    }
  })();
  (async () => {
    for await (const m of iter) {
      client.msgs.push({ data: m.string(), seq: m.seq, pin: m.headers?.get("Nats-Pin-Id") ?? null });
      m.ack();
    }
  })();
  return client;
}

async function waiting(jsm) {
  return (await jsm.consumers.info("S", "C")).num_waiting;
}

try {
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  await jsm.streams.add({ name: "S", subjects: ["s.>"], storage: "memory" });
  await jsm.consumers.add("S", {
    durable_name: "C",
    ack_policy: AckPolicy.Explicit,
    priority_policy: "pinned_client",
    priority_groups: ["A"],
    priority_timeout: nanos(60_000),
  });
  for (let i = 1; i <= 3; i++) await js.publish("s.x", `m${i}`);

  const a = (state.a = await start(js, "a"));
  await until(() => a.msgs.length === 3, "A to receive m1..m3");
  await until(async () => (await waiting(jsm)) === 1, "A's pull to wait");

  const b = (state.b = await start(js, "b"));
  await until(async () => (await waiting(jsm)) === 2, "B's pull to wait");
  for (let i = 4; i <= 6; i++) await js.publish("s.x", `m${i}`);
  await until(() => a.msgs.length === 6, "A to receive m4..m6");

  await jsm.consumers.unpin("S", "C", "A");
  for (let i = 7; i <= 12; i++) await js.publish("s.x", `m${i}`);
  await until(() => b.msgs.length === 6, "B to receive m7..m12");
  await until(() => a.events.some((e) => e.type === "consumer_unpinned"), "A to be told it lost the pin");
  await until(async () => (await waiting(jsm)) === 2, "A's new pull (without id) and B's pull to wait");

  const info = await jsm.consumers.info("S", "C");
  const out = {
    a: { msgs: a.msgs, events: a.events },
    b: { msgs: b.msgs, events: b.events },
    priority_groups: info.priority_groups,
  };
  await a.iter.close();
  await b.iter.close();
  await nc.close();
  console.log(JSON.stringify(out));
} catch (err) {
  const dump = (c) => c && { msgs: c.msgs, events: c.events };
  console.log(JSON.stringify({ error: String(err), state: { a: dump(state.a), b: dump(state.b) } }));
  await nc.close();
  process.exit(1);
}
