// nats.js over WebSocket: @nats-io/nats-core's wsconnect() against a websocket port.
//
// Usage: node ws_roundtrip.mjs <ws url> <nats url>
// Prints one JSON document on stdout (the Python test asserts on it) and exits 0.
//
// A websocket client and a TCP client share subjects: pub/sub both ways,
// request/reply, headers, and a JetStream stream with a durable consumer
// used through the websocket connection.

import WebSocket from "ws";
import { wsconnect, headers } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";

globalThis.WebSocket = WebSocket; // Node 20 has none of its own

const [wsUrl, natsUrl] = process.argv.slice(2);
const out = {};

const ws = await wsconnect({ servers: wsUrl });
const tcp = await connect({ servers: natsUrl });
out.info = { port: ws.info.port, headers: ws.info.headers };

// TCP publishes, the websocket client receives (with headers), and back.
const fromTcp = ws.subscribe("to.ws", { max: 1 });
await ws.flush();
const h = headers();
h.set("X-Test", "one");
tcp.publish("to.ws", "hello ws", { headers: h });
for await (const m of fromTcp) {
  out.toWs = { data: m.string(), header: m.headers?.get("X-Test") ?? null };
}
const fromWs = tcp.subscribe("to.tcp", { max: 1 });
await tcp.flush();
ws.publish("to.tcp", "x".repeat(5000)); // larger than a browser frame and the compression threshold
for await (const m of fromWs) {
  out.toTcpLength = m.data.length;
}

// Request/reply across transports, both ways.
tcp.subscribe("svc.tcp", { callback: (_err, m) => m.respond(`tcp:${m.string()}`) });
ws.subscribe("svc.ws", { callback: (_err, m) => m.respond(`ws:${m.string()}`) });
await tcp.flush();
await ws.flush();
out.replies = [
  (await ws.request("svc.tcp", "a", { timeout: 5000 })).string(),
  (await tcp.request("svc.ws", "b", { timeout: 5000 })).string(),
];

// JetStream through the websocket connection.
const jsm = await jetstreamManager(ws);
await jsm.streams.add({ name: "WS", subjects: ["ws.>"] });
const js = jetstream(ws);
const acks = [];
for (let i = 1; i <= 3; i++) {
  acks.push((await js.publish(`ws.${i}`, `m${i}`)).seq);
}
await jsm.consumers.add("WS", { durable_name: "C", ack_policy: "explicit" });
const consumer = await js.consumers.get("WS", "C");
const got = [];
const iter = await consumer.fetch({ max_messages: 3, expires: 5000 });
for await (const m of iter) {
  got.push(m.string());
  m.ack();
}
out.js = { acks, got };

await jsm.streams.delete("WS");
await tcp.close();
const closed = ws.closed();
await ws.close();
out.closeError = (await closed) ? String(await closed) : null;
console.log(JSON.stringify(out));
