// The TypeScript side of bench/sdk (node, over the compiled client): the
// same request without the layer (fetch + decode, as ToolClient.send does
// them) against the client's operation function (enforced), interleaved.
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
const out = { baseline: [], enforced: [] };
for (let r = 0; r < rounds; r++) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await raw();
  const t1 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await enforced();
  const t2 = process.hrtime.bigint();
  out.baseline.push(Number(t1 - t0) / 1000 / n);
  out.enforced.push(Number(t2 - t1) / 1000 / n);
}
process.stdout.write(JSON.stringify(out));
