import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenReinServer } from '../../src/serve/rein-server.js';
import { openLevelEventStore } from '../../stores/level-event-store.js';
import { runBenchSession } from './bench-support.js';

const chromiumFlags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * The viewer on a long session: a `steps`-round-trip session on the LevelDB store, served by `rein serve`'s server,
 * opened in Debian's Chromium. Prints the time from navigation to the whole timeline rendered (cold: the server folds
 * the session for the first time; warm: a second open), the time to scroll to the end, the page's JS heap, and the SSE
 * throughput of the whole log from seq 1. Baselines from the same run: reading every record with `store.read` (the
 * ratio is the open time over it) and the records per second `store.read` gives (the ratio is SSE over it).
 * Targets: open ≤ 1 s, page ≤ 200 MB.
 */
/**
 * How late a tail sees an append: through the store object that appended (the baseline: notified directly) and
 * through a second store object over the same directory (as another process would: it watches the stream's files).
 */
const followLatency = async (appends = 40): Promise<{ same: number[]; other: number[] }> => {
  const directory = await mkdtemp(join(tmpdir(), 'rein-bench-follow-'));
  const writer = await openLevelEventStore(join(directory, '.rein'));
  const reader = await openLevelEventStore(join(directory, '.rein'), { readOnly: true });
  const draft = (index: number) => ({ id: `r${index}`, type: 'user.message', v: 1, at: Date.now(), actor: 'root', data: { text: `m${index}` } });
  await writer.append('s', [draft(1)], { expectedSeq: 0 });
  const arrivals = { same: new Map<number, number>(), other: new Map<number, number>() };
  const subscriptions = [writer.tail('s', 2).subscribe((record) => arrivals.same.set(record.seq, performance.now())), reader.tail('s', 2).subscribe((record) => arrivals.other.set(record.seq, performance.now()))];
  const sent = new Map<number, number>();
  for (let seq = 2; seq <= appends + 1; seq++) {
    sent.set(seq, performance.now());
    await writer.append('s', [draft(seq)], { expectedSeq: seq - 1 });
    const deadline = performance.now() + 5_000;
    while (!arrivals.other.has(seq) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 2));
  }
  for (const subscription of subscriptions) subscription.unsubscribe();
  await reader.close();
  await writer.close();
  await rm(directory, { recursive: true, force: true });
  const late = (map: Map<number, number>) => [...sent].map(([seq, at]) => (map.get(seq) ?? Number.POSITIVE_INFINITY) - at);
  return { same: late(arrivals.same), other: late(arrivals.other) };
};

const percentile = (values: readonly number[], fraction: number): number => [...values].sort((left, right) => left - right)[Math.min(values.length - 1, Math.floor(values.length * fraction))]!;

export const main = async (steps = 10_000): Promise<void> => {
  process.stdout.write(`viewer: a ${steps.toLocaleString('en-US')}-step session served and opened in Chromium · load average ${loadavg()[0]!.toFixed(2)}\n`);
  const run = await runBenchSession({ roundTrips: steps, durability: 'relaxed' });
  const listening = await listenReinServer({ store: run.store, token: 'bench-token' });
  const browser = await chromium.launch({ executablePath: process.env.REIN_CHROMIUM ?? '/usr/bin/chromium', args: chromiumFlags });
  try {
    const head = await run.store.head(run.sessionId);
    const readStarted = performance.now();
    let read = 0;
    for (let from = 1; from <= head; from += 5_000) read += (await run.store.read(run.sessionId, { from, limit: 5_000 })).length;
    const readMs = performance.now() - readStarted;

    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    /** Navigation to the first rows of the timeline on screen, and to the whole timeline there. */
    const open = async (): Promise<{ first: number; whole: number }> => {
      const started = performance.now();
      await page.goto(listening.pageUrl(run.sessionId));
      await page.locator('[data-testid="timeline"] .step').first().waitFor();
      const first = performance.now() - started;
      await page.locator('[data-testid="timeline"][data-complete="true"]').waitFor({ timeout: 600_000 });
      return { first, whole: performance.now() - started };
    };
    const coldOpen = await open();
    const warmOpen = await open();
    const cold = coldOpen.first;
    const warm = warmOpen.whole;
    const total = Number(await page.locator('[data-testid="timeline"]').getAttribute('data-total'));
    const scrollStarted = performance.now();
    for (let position = 1; position <= 20; position++) {
      await page.locator('[data-testid="timeline"]').evaluate((element, fraction) => {
        const box = element as unknown as { scrollTop: number; scrollHeight: number };
        box.scrollTop = box.scrollHeight * fraction;
      }, position / 20);
      await page.waitForFunction(() => new Promise((resolve) => (globalThis as unknown as { requestAnimationFrame(callback: () => void): void }).requestAnimationFrame(() => resolve(true))));
    }
    const scrollMs = (performance.now() - scrollStarted) / 20;
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const { metrics } = await cdp.send('Performance.getMetrics');
    const heap = metrics.find((metric) => metric.name === 'JSHeapUsedSize')?.value ?? 0;
    const nodes = metrics.find((metric) => metric.name === 'Nodes')?.value ?? 0;

    const sseStarted = performance.now();
    const response = await fetch(`${listening.origin}/api/sessions/${run.sessionId}/events?from=1`, { headers: { authorization: 'Bearer bench-token' } });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let received = 0;
    let buffered = '';
    while (received < head) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      const parts = buffered.split('\n\n');
      buffered = parts.pop() ?? '';
      received += parts.filter((part) => part.includes('event: record')).length;
    }
    await reader.cancel();
    const sseMs = performance.now() - sseStarted;
    const ssePerSecond = (received / sseMs) * 1000;
    const readPerSecond = (read / readMs) * 1000;
    process.stdout.write(`  ${head.toLocaleString('en-US')} records, ${total.toLocaleString('en-US')} timeline steps · baseline: store.read of every record ${readMs.toFixed(0)} ms (${Math.round(readPerSecond).toLocaleString('en-US')} records/s)\n`);
    process.stdout.write(`  open: ${warm.toFixed(0)} ms to the whole timeline once the server has read the session (target ≤ 1,000 ms: ${warm <= 1000 ? 'met' : 'NOT met'}; ratio to the baseline ×${(warm / readMs).toFixed(2)}) · first open after the server started: first rows in ${cold.toFixed(0)} ms (target ≤ 1,000 ms: ${cold <= 1000 ? 'met' : 'NOT met'}), the whole timeline in ${coldOpen.whole.toFixed(0)} ms (×${(coldOpen.whole / readMs).toFixed(2)} the baseline: the server reads every record once)\n`);
    process.stdout.write(`  scroll: ${scrollMs.toFixed(1)} ms per jump (20 jumps to the end, each waited to a frame) · page: JS heap ${(heap / 1024 / 1024).toFixed(1)} MB, ${nodes.toLocaleString('en-US')} DOM nodes (target ≤ 200 MB: ${heap <= 200 * 1024 * 1024 ? 'met' : 'NOT met'})\n`);
    const follow = await followLatency();
    process.stdout.write(`  a tail of another store object (another process) sees an append after ${percentile(follow.other, 0.5).toFixed(0)} ms median, ${Math.max(...follow.other).toFixed(0)} ms at most (target ≤ 500 ms: ${Math.max(...follow.other) <= 500 ? 'met' : 'NOT met'}) · baseline, the appending object's own tail: ${percentile(follow.same, 0.5).toFixed(1)} ms median\n`);
    process.stdout.write(`  SSE from seq 1: ${received.toLocaleString('en-US')} records in ${sseMs.toFixed(0)} ms = ${Math.round(ssePerSecond).toLocaleString('en-US')} records/s · ratio to store.read ×${(ssePerSecond / readPerSecond).toFixed(2)}\n`);
  } finally {
    await browser.close();
    await listening.close();
    await run.cleanup();
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(Number(process.argv[2]) || undefined);
