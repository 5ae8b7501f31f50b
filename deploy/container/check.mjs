// Small checks for test-image.sh, in plain Node (no curl or jq needed on the host).
//   node check.mjs port                      a free TCP port on 127.0.0.1
//   node check.mjs destination PORT          an HTTP server answering 200 (runs until killed)
//   node check.mjs traffic EMU TOKEN DEST STOPFILE   publishes a message every 40 ms until STOPFILE exists
//   node check.mjs wait-ready URL SECONDS    waits for URL/-/ready to answer 200
//   node check.mjs collectors URL NAMES...   every named collector has collector_success 1
//   node check.mjs events URL                sum of upstash_qstash_message_events_total
//   node check.mjs settled EMU               waits until the emulator's traffic settled; prints its total
//   node check.mjs wait-events URL TOTAL SECONDS   waits until the exported sum equals TOTAL
//   node check.mjs status URL                HTTP status of a GET without credentials
//   node check.mjs bcrypt PASSWORD           a bcrypt hash of PASSWORD (for a web config file)
// With CHECK_BASIC_AUTH=user:password in the environment, requests to the exporter carry it.
import { createServer } from 'node:http';
import { existsSync } from 'node:fs';

const [command, ...args] = process.argv.slice(2);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A GET of the exporter, with the basic auth credentials of CHECK_BASIC_AUTH if set. */
function exporterFetch(url) {
  const credentials = process.env.CHECK_BASIC_AUTH;
  const headers =
    credentials === undefined ? {} : { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
  return fetch(url, { headers });
}

async function metricsSum(url, name) {
  const text = await (await exporterFetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function truth(emu) {
  return (await fetch(`${emu}/__emulator/ground-truth`)).json();
}

switch (command) {
  case 'port': {
    const server = createServer().listen(0, '127.0.0.1', () => {
      console.log(server.address().port);
      server.close();
    });
    break;
  }
  case 'destination':
    createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    }).listen(Number(args[0]), '127.0.0.1');
    break;
  case 'traffic': {
    const [emu, token, dest, stopFile] = args;
    for (let i = 0; !existsSync(stopFile); i++) {
      await fetch(`${emu}/v2/publish/${dest}/m${i}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'Upstash-Retries': '0' },
        body: 'x',
      }).catch(() => undefined);
      await sleep(40);
    }
    break;
  }
  case 'wait-ready': {
    const deadline = Date.now() + Number(args[1]) * 1000;
    for (;;) {
      const ok = await exporterFetch(`${args[0]}/-/ready`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) process.exit(1);
      await sleep(250);
    }
    break;
  }
  case 'collectors': {
    const text = await (await exporterFetch(`${args[0]}/metrics`)).text();
    // A region-scoped collector's series also carry qstash_region: any of its instances counts.
    const succeeded = (name) =>
      new RegExp(`^upstash_exporter_collector_success\\{collector="${name}"[^}]*\\} 1$`, 'm').test(text);
    const missing = args.slice(1).filter((name) => !succeeded(name));
    if (missing.length > 0) {
      console.error(`collectors without a successful poll: ${missing.join(', ')}`);
      process.exit(1);
    }
    break;
  }
  case 'events':
    console.log(await metricsSum(args[0], 'upstash_qstash_message_events_total'));
    break;
  case 'settled': {
    let last = -1;
    let stableSince = Date.now();
    for (;;) {
      const t = await truth(args[0]);
      const b = t.byState;
      const finished = b.CREATED === b.DELIVERED + b.FAILED + b.CANCELLED;
      if (t.total !== last) {
        last = t.total;
        stableSince = Date.now();
      } else if (finished && Date.now() - stableSince > 500) {
        console.log(t.total);
        break;
      }
      await sleep(100);
    }
    break;
  }
  case 'wait-events': {
    const [url, total, seconds] = args;
    const deadline = Date.now() + Number(seconds) * 1000;
    let sum = -1;
    while (Date.now() < deadline) {
      sum = await metricsSum(url, 'upstash_qstash_message_events_total');
      if (sum === Number(total)) break;
      await sleep(500);
    }
    console.log(sum);
    if (sum !== Number(total)) {
      const text = await (await exporterFetch(`${url}/metrics`)).text();
      const byState = {};
      for (const line of text.split('\n')) {
        const m = /^upstash_qstash_message_events_total\{.*state="([A-Z_]+)".*\} (\S+)$/.exec(line);
        if (m) byState[m[1]] = (byState[m[1]] ?? 0) + Number(m[2]);
      }
      console.error(
        `exported by state ${JSON.stringify(byState)}; late/gaps: ${text
          .split('\n')
          .filter((l) => /log_(late_events|gaps)_total /.test(l))
          .join('; ')}`,
      );
      process.exit(1);
    }
    break;
  }
  case 'status':
    console.log((await fetch(args[0])).status);
    break;
  case 'bcrypt': {
    const { default: bcrypt } = await import('bcryptjs');
    console.log(bcrypt.hashSync(args[0], 4));
    break;
  }
  default:
    console.error(`unknown command ${command}`);
    process.exit(2);
}
