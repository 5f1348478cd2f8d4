// The TypeScript contract driver (run by node over the compiled client):
// reads scenarios as JSON on stdin, runs each one through the generated
// client (loadClient or createClient, then the operation functions) and
// prints the results. The Go and Python drivers speak the same protocol.
//
// The client is driven in one of two ways (the second argument), each with
// its own run: "node", Node's own fetch, which the client makes abort through
// undici dispatchers (requests reach the mock through a global dispatcher
// that routes them there), or "signal", a fetch that drops the dispatcher
// option as browsers do, so that every attempt carries an AbortSignal. The
// output counts the requests that carried each, for the caller to check.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const clientDir = process.argv[2];
const mode = process.argv[3] || "signal";
const c = await import(pathToFileURL(clientDir + "/index.js").href);
const input = JSON.parse(readFileSync(0, "utf8"));
const mock = new URL(input.mock);
const transport = { requests: 0, signal: 0, dispatcher: 0 };
let key = "";

const nodeFetch = globalThis.fetch;
// Counts what each request of the client carries; the client calls the
// global fetch when it is given none.
globalThis.fetch = (u, init) => {
  transport.requests++;
  if (init && init.signal) transport.signal++;
  if (init && init.dispatcher) transport.dispatcher++;
  return nodeFetch(u, init);
};
if (mode === "node") {
  new Response(""); // loads undici, which sets its global dispatcher
  const sym = Symbol.for("undici.globalDispatcher.1");
  const agent = globalThis[sym];
  globalThis[sym] = {
    dispatch(opts, handler) {
      const headers = Array.isArray(opts.headers) ? [...opts.headers, "x-dome-case", key] : { ...opts.headers, "x-dome-case": key };
      return agent.dispatch({ ...opts, origin: mock.origin, headers }, handler);
    },
  };
}

function toErr(e) {
  if (e instanceof c.DomeError) return { code: e.code, message: e.detail, retryable: e.retryable };
  return { code: "driver_error", message: String(e && e.stack ? e.stack : e), retryable: false };
}

async function run(s) {
  const out = { name: s.name, steps: [] };
  let now = 1700000000000;
  const config = {
    baseUrl: s.base_url || undefined,
    credentials: s.credentials || {},
    headers: s.headers || {},
    clock: () => now,
    sleep: async () => {},
  };
  if (mode !== "node") {
    config.fetch = (u, init) => {
      const url = new URL(u);
      url.protocol = mock.protocol;
      url.host = mock.host;
      const headers = new Headers(init.headers);
      headers.set("X-Dome-Case", key);
      const { dispatcher, ...rest } = init; // eslint-disable-line no-unused-vars
      return fetch(url, { ...rest, headers });
    };
  }
  let client;
  try {
    if (s.load) {
      client = await c.loadClient({ dir: s.dir || clientDir, tool: s.tool, profile: s.profile, clientArtifactHash: s.artifact_hash, config });
    } else {
      client = c.createClient(config);
    }
  } catch (e) {
    out.error = toErr(e);
    return out;
  }
  for (let i = 0; i < s.steps.length; i++) {
    const st = s.steps[i];
    now += st.advance_ms || 0;
    key = s.name + "#" + i;
    const n = Math.max(1, st.repeat || 0);
    for (let j = 0; j < n; j++) {
      const r = { status: 0 };
      try {
        const fn = c[st.ts.fn];
        if (typeof fn !== "function") throw new Error("the client has no function " + st.ts.fn);
        const res = await fn(client, ...st.ts.args);
        r.status = res.status;
        if (res.body !== "" && res.body !== undefined) r.body = res.body;
        const eo = c.errorOf(res);
        if (eo !== null) r.error_of = { code: eo.code, retryable: eo.retryable };
      } catch (e) {
        r.error = toErr(e);
      }
      out.steps.push(r);
    }
  }
  return out;
}

const result = { hosts: [], urls: [], scenarios: [], transport };
for (const h of input.vectors.hosts || []) result.hosts.push(c.checkAllowHost(h));
for (const u of input.vectors.urls || []) {
  try {
    c.createClient({ baseUrl: u });
    result.urls.push({ host: "", error: "" });
  } catch (e) {
    result.urls.push({ host: "", error: toErr(e).message });
  }
}
for (const s of input.scenarios) result.scenarios.push(await run(s));
process.stdout.write(JSON.stringify(result));
