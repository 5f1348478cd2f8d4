// The peer: the npm "canonicalize" package (RFC 8785 reference implementation
// by one of its authors) run with node. Usage:
//   node peer.mjs INPUT ROUNDS OUT   (JSON.parse + canonicalize, timed in-process)
//   node peer.mjs INPUT              (one run, output to stdout: the whole-process form)
import canonicalize from 'canonicalize';
import { readFileSync, writeFileSync } from 'node:fs';

const [input, roundsArg, out] = process.argv.slice(2);
const text = readFileSync(input, 'utf8');
if (roundsArg === undefined) {
  process.stdout.write(canonicalize(JSON.parse(text)));
} else {
  const rounds = Number(roundsArg);
  const times = [];
  let result = '';
  for (let i = 0; i < rounds + 3; i++) {
    const t0 = process.hrtime.bigint();
    result = canonicalize(JSON.parse(text));
    const t1 = process.hrtime.bigint();
    if (i >= 3) times.push(Number(t1 - t0) / 1e6); // 3 warm-up rounds
  }
  times.sort((a, b) => a - b);
  writeFileSync(out, result);
  process.stdout.write(JSON.stringify({ median_ms: times[times.length >> 1], min_ms: times[0] }) + '\n');
}
