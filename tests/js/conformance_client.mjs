// A @nats-io/jetstream consumer run under `fakejs conformance run` (see the
// client command contract).
//
// Usage: node conformance_client.mjs   (configured by the environment:
// NATS_URL, FAKEJS_STREAM, FAKEJS_CONSUMER, FAKEJS_MODE, FAKEJS_ACK,
// FAKEJS_GROUP, FAKEJS_MAX_MESSAGES, FAKEJS_EXPIRES_MS, FAKEJS_HEARTBEAT_MS,
// FAKEJS_DURATION_MS). Prints one JSON line, {"received": N, "errors": [...]},
// and exits 0.
//
// consume mode: consumer.consume({max_messages, expires, idle_heartbeat,
// group?}) on the durable. ordered mode: js.consumers.get(stream) (the
// library's ordered pull consumer) and its consume(). Errors are what the
// library reports: consume()'s error notifications, the connection's error
// events, and anything thrown.

import { connect } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";

const env = process.env;
const settings = {
  url: env.NATS_URL ?? "nats://127.0.0.1:4222",
  stream: env.FAKEJS_STREAM,
  consumer: env.FAKEJS_CONSUMER ?? "",
  mode: env.FAKEJS_MODE || "consume",
  ack: env.FAKEJS_ACK || "ack",
  group: env.FAKEJS_GROUP ?? "",
  maxMessages: Number(env.FAKEJS_MAX_MESSAGES || 10),
  expires: Number(env.FAKEJS_EXPIRES_MS || 2000),
  heartbeat: Number(env.FAKEJS_HEARTBEAT_MS || 500),
  duration: Number(env.FAKEJS_DURATION_MS || 2500),
};

// consume()'s notifications that say something went wrong (the others are
// progress: heartbeat, next, discard, reset, flow_control, debug, pins).
const ERROR_NOTIFICATIONS = new Set([
  "heartbeats_missed",
  "consumer_not_found",
  "stream_not_found",
  "consumer_deleted",
  "exceeded_limits",
  "no_responders",
]);
const ERRORS_KEPT = 100;

const outcome = { received: 0, errors: [], dropped: 0 };

function recordError(text) {
  if (outcome.errors.length < ERRORS_KEPT) outcome.errors.push(String(text));
  else outcome.dropped++;
}

function describeStatus(s) {
  const { type, ...rest } = s;
  const detail = Object.entries(rest)
    .map(([k, v]) => `${k}=${v instanceof Error ? v.message : JSON.stringify(v)}`)
    .join(" ");
  return detail ? `${type}: ${detail}` : type;
}

async function handle(m) {
  if (settings.ack === "ack") m.ack();
  else if (settings.ack === "sync") await m.ackAck();
  else if (settings.ack === "term") m.term();
}

function consumeOptions() {
  const opts = {
    max_messages: settings.maxMessages,
    expires: settings.expires,
    idle_heartbeat: settings.heartbeat,
  };
  if (settings.group && settings.mode !== "ordered") opts.group = settings.group;
  return opts;
}

async function run(nc) {
  const js = jetstream(nc);
  const consumer =
    settings.mode === "ordered"
      ? await js.consumers.get(settings.stream)
      : await js.consumers.get(settings.stream, settings.consumer);
  const iter = await consumer.consume(consumeOptions());
  (async () => {
    for await (const s of iter.status()) {
      if (ERROR_NOTIFICATIONS.has(s.type)) recordError(describeStatus(s));
    }
  })().catch(recordError);
  const timer = setTimeout(() => iter.close().catch(recordError), settings.duration);
  try {
    for await (const m of iter) {
      outcome.received++;
      try {
        await handle(m);
      } catch (err) {
        recordError(err);
      }
    }
  } finally {
    clearTimeout(timer);
  }
  const stopped = await iter.closed();
  if (stopped instanceof Error) recordError(stopped);
}

const nc = await connect({ servers: settings.url, name: "conformance-client" });
(async () => {
  for await (const s of nc.status()) {
    if (s.type === "error") recordError(`connection: ${s.error?.message ?? s.error}`);
  }
})().catch(recordError);

try {
  await run(nc);
} catch (err) {
  recordError(err);
}
await nc.close();
const errors = outcome.dropped ? [...outcome.errors, `... ${outcome.dropped} more errors`] : outcome.errors;
console.log(JSON.stringify({ received: outcome.received, errors }));
process.exit(0);
