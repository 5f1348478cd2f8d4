// Run by TestTSRuntime_Timeouts under node over a compiled petstore client
// whose profile sets client.timeout_ms 300 and max_retries 0: how attempts
// abort at their deadline under Node's own fetch, where the client aborts
// through undici dispatchers. Prints "ok" or fails with the reason.
import http from "node:http";
import net from "node:net";
import { pathToFileURL } from "node:url";

const c = await import(pathToFileURL(process.argv[2] + "/index.js").href);
const fail = (msg) => { throw new Error(msg); };

let served = 0;
const server = http.createServer((req, res) => {
  served++;
  const slow = req.url.includes("limit=9");
  setTimeout(() => {
    res.setHeader("Content-Type", "application/json");
    res.end("[]");
  }, slow ? 2000 : 0);
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const port = server.address().port;

const seen = [];
const nodeFetch = globalThis.fetch;
globalThis.fetch = (u, init) => {
  seen.push({ signal: init.signal !== undefined, dispatcher: init.dispatcher !== undefined });
  return nodeFetch(u, init);
};
new Response(""); // loads undici, which sets its global dispatcher
const sym = Symbol.for("undici.globalDispatcher.1");
const agent = globalThis[sym];
const Agent = agent.constructor;
// Every request goes to the local server, whatever host the client names.
const route = (to) => ({ dispatch: (opts, handler) => to.dispatch({ ...opts, origin: "http://127.0.0.1:" + port }, handler) });
globalThis[sym] = route(agent);

const client = c.createClient({ credentials: { apiKey: "k" } });
async function timedOut(what, limit) {
  const t0 = Date.now();
  try {
    await c.listPets(client, { limit });
  } catch (e) {
    const ms = Date.now() - t0;
    if (!(e instanceof c.DomeError) || e.code !== "timeout") fail(what + ": " + e);
    if (ms > 1500) fail(what + ": the timeout came after " + ms + " ms, want about 300");
    return;
  }
  fail(what + ": no timeout");
}

// The first attempt finds out that this fetch takes a dispatcher; later ones carry no signal.
for (let i = 0; i < 3; i++) {
  const r = await c.listPets(client, { limit: 1 });
  if (r.status !== 200) fail("listPets: status " + r.status);
}
if (!seen[0].signal || !seen[0].dispatcher) fail("first attempt: " + JSON.stringify(seen[0]));
if (seen[1].signal || seen[2].signal || !seen[2].dispatcher) fail("later attempts: " + JSON.stringify(seen.slice(1)));

// Connected, no answer yet: undici's abort ends the request.
let before = served;
await timedOut("a server that answers late", 9);
await new Promise((r) => setTimeout(r, 100));
if (served !== before + 1) fail("the late server saw " + (served - before) + " requests");

// A connection that never comes: the call fails at its deadline.
globalThis[sym] = new Agent({ connect() {} });
await timedOut("a connection that never comes", 1);

// A connection that comes after the deadline: the request is never written.
before = served;
globalThis[sym] = route(new Agent({
  connect(opts, cb) {
    setTimeout(() => { const s = net.connect(port, "127.0.0.1", () => cb(null, s)); }, 600);
  },
}));
await timedOut("a connection that comes late", 1);
await new Promise((r) => setTimeout(r, 1000));
if (served !== before) fail("a request that timed out before its connection was sent anyway");

// And the client still works.
globalThis[sym] = route(agent);
const r = await c.listPets(client, { limit: 1 });
if (r.status !== 200) fail("after the timeouts: status " + r.status);
server.close();
server.closeAllConnections?.();
process.stdout.write("ok");
process.exit(0);
