// docs/shop-integration.md's Node.js example (jose), run as written against a local room: an
// admitted visitor's ticket is verified offline, redeemed once, traded for the shop's session
// and stripped from the URL; every ticket a shop must refuse is refused; /client admits once.
//
// The room is `python -m tests.support.shop_room` (the Python example's tests use the same), run
// with $BEEKEEPER_PYTHON (scripts/check sets it) or this checkout's .venv.
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

let roomProcess;
let room;
let example;
let shopUrl;
let generated;

before(async () => {
  roomProcess = spawn(python, ["-m", "tests.support.shop_room"], {
    cwd: repo,
    stdio: ["pipe", "pipe", "inherit"],
  });
  room = JSON.parse(await firstLine(roomProcess.stdout, ROOM_START_MS));
  // Configured as a shop would be: from its environment.
  process.env.BEEKEEPER_ROOM_URL = room.room_url;
  process.env.BEEKEEPER_ROOM_NAME = room.room_name;
  process.env.SHOP_ORIGIN = room.shop_origin;
  // Written inside node_modules so that `import ... from "jose"` finds this checkout's jose.
  const folder = path.join(repo, "node_modules", ".cache", "beekeeper-examples");
  mkdirSync(folder, { recursive: true });
  generated = path.join(folder, `shop-${process.pid}.mjs`);
  writeFileSync(generated, snippet("shop.mjs"));
  example = await import(pathToFileURL(generated).href);
  example.shop.listen(0, "127.0.0.1");
  await once(example.shop, "listening");
  shopUrl = `http://127.0.0.1:${example.shop.address().port}`;
});

after(async () => {
  example?.shop.close();
  if (generated) rmSync(generated, { force: true });
  if (roomProcess && roomProcess.exitCode === null) {
    roomProcess.stdin.end();
    await once(roomProcess, "exit");
  }
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
