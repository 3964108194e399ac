// nats.js authenticators in operator (JWT) mode: credsAuthenticator, jwtAuthenticator and nkeyAuthenticator.
//
// Usage: node authenticators.mjs <nats url> <directory>
// The directory holds what the Python test minted: user.creds, user.jwt, user.seed, bearer.jwt.
// Prints one JSON document on stdout (the Python test asserts on it) and exits 0: for each way of
// logging in, either the round trip it made ("ok") or the error nats.js gave.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { credsAuthenticator, jwtAuthenticator, nkeyAuthenticator } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";

const [url, dir] = process.argv.slice(2);
const read = (name) => readFileSync(join(dir, name), "utf8").trim();
const bytes = (name) => new TextEncoder().encode(read(name));

const ways = {
  creds: () => credsAuthenticator(bytes("user.creds")),
  jwtAndSeed: () => jwtAuthenticator(read("user.jwt"), bytes("user.seed")),
  // Two authenticators, merged by nats.js: the JWT from one, the nonce signed by the other.
  jwtAndNkey: () => [jwtAuthenticator(read("user.jwt")), nkeyAuthenticator(bytes("user.seed"))],
  bearer: () => jwtAuthenticator(read("bearer.jwt")),
  nkeyAlone: () => nkeyAuthenticator(bytes("user.seed")),
  jwtUnsigned: () => jwtAuthenticator(read("user.jwt")),
};

const out = {};
for (const [name, authenticator] of Object.entries(ways)) {
  try {
    const nc = await connect({ servers: url, authenticator: authenticator(), reconnect: false, maxReconnectAttempts: 0 });
    const sub = nc.subscribe(`auth.${name}`, { max: 1 });
    nc.publish(`auth.${name}`, name);
    for await (const m of sub) {
      out[name] = m.string() === name ? "ok" : `got ${m.string()}`;
    }
    await nc.close();
  } catch (err) {
    out[name] = { name: err.name, message: err.message };
  }
}
console.log(JSON.stringify(out));
