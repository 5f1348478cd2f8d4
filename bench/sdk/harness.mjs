// The TypeScript side of bench/sdk (node, over the compiled client): the
// same request without the layer (fetch + decode, as ToolClient.send does
// them) against the client's operation function (enforced), in
// interleaved ABBA rounds.
import { pathToFileURL } from "node:url";
const [dir, base, roundsS, nS] = process.argv.slice(2);
const c = await import(pathToFileURL(dir + "/index.js").href);
const rounds = Number(roundsS), n = Number(nS);
const client = c.createClient({ baseUrl: base, credentials: { apiKey: "k" } });
async function raw() {
  const res = await fetch(base + "/items/" + encodeURIComponent(String(7)), { method: "GET", headers: { "X-API-Key": "k" } });
  const text = await res.text();
  const body = /[/+]json\b/i.test(res.headers.get("Content-Type") ?? "") ? JSON.parse(text) : text;
  if (res.status !== 200 || body.id !== 7) throw new Error("bad response");
}
async function enforced() {
  const r = await c.getItem(client, 7);
  if (r.status !== 200 || r.body.id !== 7) throw new Error("bad response");
}
for (let i = 0; i < 200; i++) { await raw(); await enforced(); }
async function per(f) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await f();
  return Number(process.hrtime.bigint() - t0) / 1000 / n;
}
const out = { baseline: [], enforced: [] };
// ABBA: even rounds run the baseline first, odd rounds the layer first, so
// that warm-up and drift within a round favour neither.
for (let r = 0; r < rounds; r++) {
  if (r % 2 === 0) {
    out.baseline.push(await per(raw));
    out.enforced.push(await per(enforced));
  } else {
    out.enforced.push(await per(enforced));
    out.baseline.push(await per(raw));
  }
}
process.stdout.write(JSON.stringify(out));
