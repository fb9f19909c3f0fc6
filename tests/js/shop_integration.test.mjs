// docs/shop-integration.md's Node.js example (jose), run as written against a local room: an
// admitted visitor's ticket is verified offline, redeemed once, traded for the shop's session
// and stripped from the URL; every ticket a shop must refuse is refused; /client admits once. The
// "Capacity mode" section's functions run against a capacity-mode room (a second copy of the
// example, configured for it): /client renews the session, /leave ends it once.
//
// The rooms are `python -m tests.support.shop_room` (the Python example's tests use the same),
// run with $BEEKEEPER_PYTHON (scripts/check sets it) or this checkout's .venv.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const python = process.env.BEEKEEPER_PYTHON ?? path.join(repo, ".venv/bin/python");
const ROOM_START_MS = 60_000;

// The example: the blocks after `<!-- snippet: shop.mjs -->`, in order (tests/support/snippets.py
// reads the Python one the same way).
function snippet(name) {
  const page = readFileSync(path.join(repo, "docs/shop-integration.md"), "utf8");
  const blocks = [...page.matchAll(/<!-- snippet: (\S+) -->\n```[a-z]*\n([\s\S]*?)\n```/g)]
    .filter((match) => match[1] === name)
    .map((match) => match[2]);
  assert.ok(blocks.length > 0, `docs/shop-integration.md has no example ${name}`);
  return `${blocks.join("\n\n\n")}\n`;
}

async function firstLine(stream, timeoutMs) {
  let text = "";
  const timer = setTimeout(() => stream.destroy(new Error("the room did not start")), timeoutMs);
  try {
    for await (const chunk of stream) {
      text += chunk;
      if (text.includes("\n")) return text.slice(0, text.indexOf("\n"));
    }
  } finally {
    clearTimeout(timer);
  }
  throw new Error("the room ended before saying where it is");
}

let roomProcesses = [];
let room;
let capacityRoom;
let example;
let capacityExample;
let shopUrl;
let generated;

async function startRoom(args) {
  const child = spawn(python, ["-m", "tests.support.shop_room", ...args], {
    cwd: repo,
    stdio: ["pipe", "pipe", "inherit"],
  });
  roomProcesses.push(child);
  return JSON.parse(await firstLine(child.stdout, ROOM_START_MS));
}

// The example configured as a shop would be, from its environment; each configuration is a
// module of its own (the query string keeps a second import from reusing the first).
async function loadExample(facts, instance) {
  process.env.BEEKEEPER_ROOM_URL = facts.room_url;
  process.env.BEEKEEPER_ROOM_NAME = facts.room_name;
  process.env.SHOP_ORIGIN = facts.shop_origin;
  return import(`${pathToFileURL(generated).href}?${instance}`);
}

before(async () => {
  [room, capacityRoom] = await Promise.all([startRoom([]), startRoom(["--max-inside", "1"])]);
  // Written inside node_modules so that `import ... from "jose"` finds this checkout's jose.
  const folder = path.join(repo, "node_modules", ".cache", "beekeeper-examples");
  mkdirSync(folder, { recursive: true });
  generated = path.join(folder, `shop-${process.pid}.mjs`);
  writeFileSync(generated, snippet("shop.mjs"));
  capacityExample = await loadExample(capacityRoom, "capacity");
  example = await loadExample(room, "rate");
  example.shop.listen(0, "127.0.0.1");
  await once(example.shop, "listening");
  shopUrl = `http://127.0.0.1:${example.shop.address().port}`;
});

after(async () => {
  example?.shop.close();
  if (generated) rmSync(generated, { force: true });
  await Promise.all(
    roomProcesses
      .filter((child) => child.exitCode === null)
      .map((child) => {
        child.stdin.end();
        return once(child, "exit");
      }),
  );
});

function atShop(url) {
  const parts = new URL(url);
  return `${shopUrl}${parts.pathname}${parts.search}`;
}

async function visit(url, cookie) {
  return fetch(atShop(url), { redirect: "manual", headers: cookie ? { cookie } : {} });
}

test("an admitted visitor is let in once and the ticket leaves the URL", async () => {
  const arrival = await visit(room.admission_url);
  assert.equal(arrival.status, 303);
  assert.equal(arrival.headers.get("location"), "/sale?from=email");
  const [setCookie] = arrival.headers.getSetCookie();
  assert.match(setCookie, /^shop_session=[^;]+; .*HttpOnly/);
  const page = await visit("http://localhost:3000/sale?from=email", setCookie.split(";")[0]);
  assert.equal(page.status, 200);
  assert.equal(await page.text(), "Welcome to the sale.");

  const replay = await visit(room.admission_url);
  assert.equal(replay.status, 403);
  assert.deepEqual(replay.headers.getSetCookie(), []);
  assert.equal((await visit("http://localhost:3000/sale")).status, 403);
});

for (const kind of ["tampered", "other_room", "other_origin", "expired", "unknown_key"]) {
  test(`a ${kind.replace("_", " ")} ticket is refused`, async () => {
    const ticket = room.tickets[kind];
    assert.equal(await example.verifyTicket(ticket), null);
    const arrival = await visit(`http://localhost:3000/sale?beekeeper_ticket=${ticket}`);
    assert.equal(arrival.status, 403);
    assert.deepEqual(arrival.headers.getSetCookie(), []);
  });
}

test("the genuine ticket verifies with the documented claims", async () => {
  const claims = await example.verifyTicket(room.tickets.valid);
  assert.notEqual(claims, null);
  assert.deepEqual(Object.keys(claims).sort(), ["aud", "exp", "iat", "iss", "jti", "room", "sub"]);
  assert.equal(claims.iss, room.room_url);
  assert.equal(claims.aud, room.shop_origin);
  assert.equal(claims.room, room.room_name);
});

test("the /client variant admits a token once", async () => {
  assert.equal(await example.admittedByRoom(room.token), true);
  assert.equal(await example.admittedByRoom(room.token), false);
  assert.equal(await example.admittedByRoom(`forged${room.token.slice(6)}`), false);
});

test("in capacity mode the shop renews the session and ends it with /leave", async () => {
  const token = capacityRoom.token;
  // The shop's first check is the visitor's arrival; every check renews the session.
  assert.equal(await capacityExample.renewSession(token), true);
  assert.equal(await capacityExample.renewSession(token), true);
  // Done: the first leave ends the session, a second finds it ended, a check is refused.
  assert.equal(await capacityExample.leaveRoom(token), true);
  assert.equal(await capacityExample.leaveRoom(token), false);
  assert.equal(await capacityExample.renewSession(token), false);
  assert.equal(await capacityExample.leaveRoom("not-a-token"), false);
  assert.equal(await capacityExample.renewSession("not-a-token"), false);
});

test("a room that does not answer keeps the visitor", async () => {
  // Port 9 refuses connections on this machine: the room "did not answer".
  const unreachable = await loadExample(
    { ...capacityRoom, room_url: "http://127.0.0.1:9/room" },
    "unreachable",
  );
  assert.equal(await unreachable.renewSession(capacityRoom.token), true);
  assert.equal(await unreachable.leaveRoom(capacityRoom.token), false);
});

// P-256's group order: an ECDSA signature (r, s) and its twin (r, n - s) both verify.
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

function signatureS(ticket) {
  const raw = Buffer.from(ticket.split(".")[2], "base64url");
  assert.equal(raw.length, 64);
  return BigInt(`0x${raw.subarray(32).toString("hex")}`);
}

function withS(ticket, s) {
  const [header, payload, signature] = ticket.split(".");
  const raw = Buffer.from(signature, "base64url");
  const high = Buffer.from(s.toString(16).padStart(64, "0"), "hex");
  const twin = Buffer.concat([raw.subarray(0, 32), high]).toString("base64url");
  return [header, payload, twin].join(".");
}

test("the room's tickets carry the canonical low-S signature and verify with jose", async () => {
  assert.ok(room.signed.length >= 40);
  for (const ticket of room.signed) {
    assert.ok(signatureS(ticket) <= P256_ORDER / 2n, "a high-S signature");
    assert.notEqual(await example.verifyTicket(ticket), null);
  }
});

test("a ticket's high-S twin verifies too, so the example redeems by jti and refuses it", async () => {
  const [ticket] = room.signed;
  const twin = withS(ticket, P256_ORDER - signatureS(ticket));
  assert.notEqual(twin, ticket);
  assert.deepEqual(await example.verifyTicket(twin), await example.verifyTicket(ticket));
  const first = await visit(`http://localhost:3000/sale?beekeeper_ticket=${ticket}`);
  assert.equal(first.status, 303);
  const again = await visit(`http://localhost:3000/sale?beekeeper_ticket=${twin}`);
  assert.equal(again.status, 403);
});
