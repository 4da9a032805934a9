// Browser tests of `tafl serve` in Debian's Chromium, driven by playwright-core (no browser
// download). Run by scripts/web-browser-tests.sh, which installs both and builds tafl.
//
//   node test.cjs TAFL_BINARY ARTIFACT_DIR [RUN_DIR]
//
// Starts `tafl serve` on a free port with a fake run folder it writes (or RUN_DIR, a real run,
// for screenshots), then: loads the page, plays a legal move by clicking, sees an illegal one
// refused, sees the engine answer, imports a FEN (and sees the danger hint), analyses, opens the
// run's dashboard, sees its curves and sees them grow when the metrics file grows. Screenshots
// of each view go to ARTIFACT_DIR.
'use strict';

const { chromium } = require('playwright-core');
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [tafl, artifacts, realRun] = process.argv.slice(2);
if (!tafl || !artifacts) {
  console.error('usage: node test.cjs TAFL_BINARY ARTIFACT_DIR [RUN_DIR]');
  process.exit(2);
}
fs.mkdirSync(artifacts, { recursive: true });

let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
}

// A run folder as `tafl train` writes it, with a few events of each kind.
function fakeRun() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tafl-web-run-'));
  for (const d of ['logs', 'models/m000001', 'models/m000002', 'arena', 'selfplay/m000001']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.toml'), '[run]\nvariant = "copenhagen"\n');
  fs.writeFileSync(path.join(dir, 'models/best'), 'm000002\n');
  for (const [id, it] of [['m000001', 1], ['m000002', 2]]) {
    fs.writeFileSync(path.join(dir, `models/${id}/meta.json`), JSON.stringify({ id, iteration: it, net: 'b4c48', samples_seen: 20000 * it, created: 1764550000 + 3600 * it }));
  }
  fs.writeFileSync(path.join(dir, 'arena/gate-m000002.json'), JSON.stringify({ candidate: 'm000002', best: 'm000001', score: 0.62, passed: true }));
  fs.writeFileSync(path.join(dir, 'arena/gate-m000002.csv'), '# gate: m000002 (player 0) vs m000001\nd1-d3 e5-e2 a4-c4 g5-g3,0,0,Ongoing\n');
  fs.writeFileSync(path.join(dir, 'selfplay/m000001/shard-0001.csv'), '# m000001 king-escaped 4 plies\nd1-d3 e5-e2 a4-c4 g5-g3,0,0,Ongoing\n');
  const lines = [];
  const t0 = 1764550000;
  for (let i = 1; i <= 6; i++) {
    lines.push({ event: 'selfplay', time: t0 + 1200 * i, games: 64, evals_per_s: 900 + 40 * i, moves_per_s: 80 + 5 * i, games_per_s: 0.4, attacker_wins: 40 - 3 * i, defender_wins: 20 + 3 * i, draws: 4 });
    lines.push({ event: 'optimize', time: t0 + 1200 * i + 300, iteration: i, loss: 4 - 0.4 * i, policy_loss: 3.2 - 0.3 * i, value_loss: 0.8 - 0.1 * i });
    if (i % 2 === 0) {
      lines.push({ event: 'eval', time: t0 + 1200 * i + 600, model: `m00000${i / 2}`, opponent: 'alphabeta:depth=1', elo: -300 + 120 * i, score: 0.2 + 0.1 * i, iteration: i });
      lines.push({ event: 'eval', time: t0 + 1200 * i + 650, model: `m00000${i / 2}`, opponent: 'alphabeta:depth=3', elo: -600 + 90 * i, score: 0.1 + 0.05 * i, iteration: i });
    }
  }
  fs.writeFileSync(path.join(dir, 'logs/metrics.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return dir;
}

function startServer(run) {
  return new Promise((resolve, reject) => {
    const players = ['alphabeta:time=300ms', 'builtin:visits=32', 'alphabeta:depth=2'];
    if (realRun) players.push(`mcts:model=${realRun},visits=64`);
    const args = ['serve', '--listen', '127.0.0.1:0', '--run', run, ...players.flatMap((p) => ['--player', p])];
    const child = spawn(tafl, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`tafl serve did not start: ${out}`)), 20000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/http:\/\/(127\.0\.0\.1:\d+)\//);
      if (m) { clearTimeout(timer); resolve({ child, url: `http://${m[1]}/`, banner: out }); }
    });
    child.stderr.on('data', (d) => { out += d; });
    child.on('exit', (code) => reject(new Error(`tafl serve exited with ${code}: ${out}`)));
  });
}

async function main() {
  const run = realRun || fakeRun();
  const { child, url, banner } = await startServer(run);
  check(/this machine only/.test(banner), 'the server says it listens on this machine only');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tafl-web-chromium-'));
  // A fresh profile (playwright passes it as --user-data-dir).
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 860 },
  });
  const page = browser.pages()[0] || await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const shot = (name) => page.screenshot({ path: path.join(artifacts, `${name}.png`) });
  const status = () => page.textContent('#status');
  const plies = () => page.locator('#movelist .ply').count();
  try {
    await page.goto(url);
    await page.waitForSelector('#board [data-piece="f6"]');
    check(await page.locator('#board .piece.attacker').count() === 24, 'the board shows 24 attackers');
    check(await page.locator('#board .coord').count() === 44, 'coordinates on four sides');

    // A legal move by clicking: its targets are highlighted, then the engine answers.
    await page.click('#board [data-piece="d1"]');
    check(await page.locator('#board [data-target]').count() > 0, 'clicking a piece highlights its legal targets');
    await page.click('#board [data-target="d3"]');
    await page.waitForFunction(() => document.querySelectorAll('#movelist .ply').length === 2, null, { timeout: 20000 });
    check((await page.textContent('#movelist')).includes('d1-d3'), 'the move is in the move list');
    check(/played/.test(await status()), `the engine answered: ${await status()}`);
    await shot('play');

    // An illegal move is refused with the server's reason, and nothing is played.
    const [from, to] = await page.evaluate(() => {
      const legal = st.view.legal;
      const from = Object.keys(legal).find((f) => f !== 'f6');
      const [fx, fr] = [from.charCodeAt(0) - 97, parseInt(from.slice(1), 10) - 1];
      for (const [dx, dr] of [[1, 1], [-1, 1], [1, -1], [-1, -1]]) {
        const x = fx + dx, r = fr + dr;
        if (x >= 0 && x < 11 && r >= 0 && r < 11 && !legal[String.fromCharCode(97 + x) + (r + 1)]) return [from, String.fromCharCode(97 + x) + (r + 1)];
      }
      return [from, from];
    });
    await page.click(`#board [data-piece="${from}"]`);
    await page.click(`#board rect[data-sq="${to}"]`, { force: true });
    await page.waitForSelector('#status.error');
    check(/Illegal/.test(await status()), `an illegal move ${from}-${to} is refused: ${await status()}`);
    check(await plies() === 2, 'nothing was played');
    await shot('illegal');

    // Take back: to the position before the person's move.
    await page.click('#takeback');
    await page.waitForFunction(() => document.querySelectorAll('#movelist .ply').length === 0);
    check(true, 'take back returns to the start');

    // Import a FEN: the king closed in on three sides is marked.
    await page.fill('#io', '11/11/11/11/3a7/2aka6/11/11/11/11/11 d');
    await page.click('#import');
    await page.waitForSelector('#board .danger');
    check(/closed in on three sides/.test(await status()), `the danger hint: ${await status()}`);
    await page.fill('#io', 'this is no FEN/record');
    await page.click('#import');
    await page.waitForSelector('#status.error');
    check(/Cannot load/.test(await status()), `a bad FEN gets a message: ${await status()}`);

    // Analyse: the value bar and the line fill in while it thinks; flip works.
    await page.fill('#io', 'd1-d3 e5-e2 a4-c4 g5-g3');
    await page.click('#import');
    await page.waitForFunction(() => document.querySelectorAll('#movelist .ply').length === 4);
    await page.click('#tab-analyse');
    await page.waitForFunction(() => document.querySelector('#a-pv').textContent.length > 3, null, { timeout: 20000 });
    check(/depth/.test(await page.textContent('#a-search')), `analysis: ${await page.textContent('#a-search')}`);
    check(await page.locator('#board .best').count() === 1, 'the best move is drawn as an arrow');
    await page.click('#graph-go');
    await page.waitForFunction(() => st.values.length === 5, null, { timeout: 30000 });
    check(true, 'the value graph has a point for every position');
    await page.click('#prev');
    await page.waitForFunction(() => document.querySelector('#cursor').textContent.startsWith('ply 3'));
    check(true, 'stepping back through the game');
    await page.waitForTimeout(1500);
    await shot('analyse');
    await page.click('#analyse-stop');

    // The players are the server's: a list to choose from, not a spec to type.
    const offered = await page.$$eval('#analyser option', (os) => os.map((o) => o.value));
    check(offered.join(',') === 'alphabeta:time=300ms,builtin:visits=32,alphabeta:depth=2' + (realRun ? `,mcts:model=${realRun},visits=64` : ''), `the players offered: ${offered}`);
    check(await page.locator('input#analyser, input#player').count() === 0, 'no field to type a spec into');

    // The deepest analysis stays shown: after a 3 s analysis, the line shown is the deepest
    // any event gave (the last events of a round cut short were shallower, once).
    await page.selectOption('#thinktime', '3000');
    const depths = await page.evaluate(async () => {
      const seen = [];
      const observer = new MutationObserver(() => {
        const m = /depth (\d+)/.exec(document.querySelector('#a-search').textContent);
        if (m) seen.push(Number(m[1]));
      });
      observer.observe(document.querySelector('#a-search'), { childList: true, characterData: true, subtree: true });
      await startAnalysis();
      observer.disconnect();
      return { seen, final: document.querySelector('#a-search').textContent };
    });
    const finalDepth = Number((/depth (\d+)/.exec(depths.final) || [0, -1])[1]);
    check(depths.seen.length >= 2 && finalDepth === Math.max(...depths.seen), `the deepest analysis is the one shown: ${depths.final} after depths ${depths.seen}`);
    check(/\(done\)/.test(depths.final), `the analysis ends on its own: ${depths.final}`);

    // The shipped net as analyser: its policy as a heat map, its effort in visits.
    await page.selectOption('#thinktime', '3000');
    await page.selectOption('#analyser', 'builtin:visits=32');
    await page.waitForSelector('#board .heat', { timeout: 20000 });
    check(await page.locator('#board .heat').count() > 3, 'the heat map of builtin covers several squares');
    await page.waitForFunction(() => /visits, a line of \d+ plies/.test(document.querySelector('#a-search').textContent), null, { timeout: 20000 });
    check(/builtin:visits=32: [\d,]+ visits/.test(await page.textContent('#a-search')), `builtin counts visits: ${await page.textContent('#a-search')}`);
    await shot('analyse-builtin');
    await page.click('#analyse-stop');
    await page.selectOption('#analyser', 'alphabeta:time=300ms');
    await page.click('#analyse-stop');

    // Watch the run: curves drawn, models and games listed, and growing with the metrics.
    await page.click('#tab-watch');
    await page.waitForSelector('#chart-loss canvas');
    const canvases = await page.locator('#charts canvas').count();
    check(canvases === 4, `four charts drawn (${canvases})`);
    check(await page.locator('#models tr').count() >= 2, 'the models are listed');
    check(await page.locator('#games tr.game').count() >= 1, 'the newest games are listed');
    if (!realRun) {
      const before = await page.textContent('#run-summary');
      check(/6 training rounds/.test(before), `summary: ${before}`);
      fs.appendFileSync(path.join(run, 'logs/metrics.jsonl'), JSON.stringify({ event: 'optimize', time: 1764550000 + 9000, iteration: 7, loss: 1.1, policy_loss: 1.0, value_loss: 0.1 }) + '\n');
      await page.waitForFunction(() => /7 training rounds/.test(document.querySelector('#run-summary').textContent), null, { timeout: 15000 });
      check(true, 'the dashboard refreshes when the run writes a metric');
    }
    await page.waitForTimeout(500);
    await shot('watch');
    await page.click('#games tr.game');
    await page.waitForFunction(() => st.tab === 'analyse' && st.moves.length > 0, null, { timeout: 10000 });
    check(true, 'a game of the run opens on the board');
    if (realRun) {
      // The run's own net as analyser: its policy as a heat map (for the README's screenshot).
      await page.selectOption('#analyser', `mcts:model=${realRun},visits=64`);
      await page.click('#last');
      await page.waitForTimeout(300);
      await page.click('#first');
      await page.waitForSelector('#board .heat', { timeout: 20000 });
      await page.click('#graph-go');
      await page.waitForFunction(() => !st.graph && st.values.length > 1, null, { timeout: 60000 });
      await page.waitForTimeout(1500);
      await shot('analyse-net');
    }
    check(errors.length === 0, `no script errors ${errors.join('; ')}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${e.stack || e}`);
    await shot('failure').catch(() => {});
  } finally {
    await browser.close();
    child.kill();
    fs.rmSync(profile, { recursive: true, force: true });
    if (!realRun) fs.rmSync(run, { recursive: true, force: true });
  }
  console.log(failures ? `${failures} check(s) failed` : 'all browser checks passed');
  process.exit(failures ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
