// tafl serve: the page. Plain JavaScript, no build step. The game lives here (start FEN and
// moves); the server replays it with the rules and answers with everything to draw.
'use strict';

const $ = (s) => document.querySelector(s);
const SVGNS = 'http://www.w3.org/2000/svg';

const st = {
  info: null,
  variant: null,
  start: null,        // FEN, null for the variant's start
  moves: [],          // plies as text
  cursor: 0,          // how many of `moves` the board shows
  view: null,         // the server's GameView at the cursor
  selected: null,
  flipped: false,
  tab: 'play',
  engine: null,       // AbortController of the engine request in flight
  analysis: null,     // AbortController of the running analysis
  graph: null,        // AbortController of the value graph
  policy: null,       // the net's policy of the shown position
  best: null,         // the search's best move
  values: [],         // value graph points
  run: null,          // index of the run watched
  runLive: null,
  charts: {},
};

// ---------- server ----------

async function api(path, body, signal) {
  const init = body === undefined ? { signal } : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal };
  const res = await fetch(path, init);
  let data;
  try { data = await res.json(); } catch (e) { data = { error: `${res.status} ${res.statusText}` }; }
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

function gameRequest(moves) {
  return { variant: st.variant, start: st.start, moves: moves ?? st.moves.slice(0, st.cursor) };
}

// A server-sent event stream answering a POST (EventSource can only GET, and everything that
// searches is a POST so that other sites cannot start it): calls on[name](data) for each event
// until the stream ends; throws the server's error when the request is refused.
async function postEvents(path, body, signal, on) {
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  if (!res.ok) {
    let data;
    try { data = await res.json(); } catch (e) { data = { error: `${res.status} ${res.statusText}` }; }
    throw new Error(data.error || res.statusText);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length && on[name]) on[name](JSON.parse(data.join('\n')));
    }
  }
}

// ---------- status ----------

function say(text, kind) {
  const el = $('#status');
  el.textContent = text;
  el.className = kind || '';
}

function sideName(side) { return side === 'attackers' ? 'attackers' : 'defenders'; }

function describe(view) {
  if (view.outcome) {
    const o = view.outcome;
    return o.winner ? `The ${o.winner} win: ${o.reason.replace(/-/g, ' ')}.` : `Draw: ${o.reason.replace(/-/g, ' ')}.`;
  }
  const notes = [`${sideName(view.side_to_move)} to move`];
  if (view.danger.surrounded) notes.push('the king is closed in on three sides: one attacker move can capture him');
  if (view.danger.sees_corners.length) notes.push(`the king sees ${view.danger.sees_corners.join(' and ')}`);
  if (view.danger.forks.length) notes.push(`the king can fork two corners from ${view.danger.forks.join(', ')}`);
  return notes.join('; ');
}

// ---------- board ----------

function el(name, attrs, parent) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

const CELL = 48, MARGIN = 26;

function squareName(file, rank) { return String.fromCharCode(97 + file) + (rank + 1); }
function parseSquare(sq) { return [sq.charCodeAt(0) - 97, parseInt(sq.slice(1), 10) - 1]; }

// Where a square is drawn (its top-left corner).
function place(sq, n) {
  const [f, r] = parseSquare(sq);
  const col = st.flipped ? n - 1 - f : f;
  const row = st.flipped ? r : n - 1 - r;
  return [MARGIN + col * CELL, MARGIN + row * CELL];
}

function center(sq, n) { const [x, y] = place(sq, n); return [x + CELL / 2, y + CELL / 2]; }

function drawBoard() {
  const v = st.view;
  const svg = $('#board');
  svg.innerHTML = '';
  if (!v) return;
  const n = v.size;
  const full = n * CELL + 2 * MARGIN;
  svg.setAttribute('viewBox', `0 0 ${full} ${full}`);
  const defs = el('defs', {}, svg);
  const marker = el('marker', { id: 'arrowhead', viewBox: '0 0 10 10', refX: 5, refY: 5, markerWidth: 4, markerHeight: 4, orient: 'auto-start-reverse' }, defs);
  el('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#1f6fd1' }, marker);
  el('rect', { x: 0, y: 0, width: full, height: full, rx: 10, class: 'frame' }, svg);

  const last = v.plies.length ? v.plies[v.plies.length - 1] : null;
  const targets = st.selected ? (v.legal[st.selected] || []) : [];
  const heat = st.tab === 'analyse' && $('#heat').checked && st.policy ? st.policy.to : null;
  const heatMax = heat ? Math.max(...Object.values(heat), 1e-6) : 1;

  for (let rank = 0; rank < n; rank++) {
    for (let file = 0; file < n; file++) {
      const sq = squareName(file, rank);
      const [x, y] = place(sq, n);
      let cls = 'sq';
      if (v.thrones.includes(sq)) cls += ' throne';
      if (v.corners.includes(sq)) cls += ' corner';
      if (last && (last.from === sq || last.to === sq)) cls += ' last';
      if (sq === st.selected) cls += ' selected';
      el('rect', { x, y, width: CELL, height: CELL, class: cls, 'data-sq': sq }, svg);
      if (v.thrones.includes(sq) || v.corners.includes(sq)) {
        el('path', { d: `M${x + 10} ${y + 10} L${x + CELL - 10} ${y + CELL - 10} M${x + CELL - 10} ${y + 10} L${x + 10} ${y + CELL - 10}`, class: 'restricted' }, svg);
      }
      if (heat && heat[sq]) {
        el('rect', { x: x + 2, y: y + 2, width: CELL - 4, height: CELL - 4, rx: 6, class: 'heat', 'fill-opacity': (0.12 + 0.75 * Math.sqrt(heat[sq] / heatMax)).toFixed(3), 'data-heat': heat[sq].toFixed(4) }, svg);
      }
    }
  }
  // Coordinates: files along the bottom and top, ranks on both sides.
  for (let i = 0; i < n; i++) {
    const file = st.flipped ? n - 1 - i : i;
    const rank = st.flipped ? i : n - 1 - i;
    const letter = String.fromCharCode(97 + file);
    for (const y of [MARGIN / 2 + 5, full - MARGIN / 2 + 5]) el('text', { x: MARGIN + i * CELL + CELL / 2, y, class: 'coord' }, svg).textContent = letter;
    for (const x of [MARGIN / 2, full - MARGIN / 2]) el('text', { x, y: MARGIN + i * CELL + CELL / 2 + 5, class: 'coord' }, svg).textContent = String(rank + 1);
  }
  // The king's open lines to corners.
  if (v.danger.king) {
    for (const c of v.danger.sees_corners) {
      const [x1, y1] = center(v.danger.king, n), [x2, y2] = center(c, n);
      el('line', { x1, y1, x2, y2, class: 'sees' }, svg);
    }
    for (const f of v.danger.forks) {
      const [cx, cy] = center(f, n);
      el('path', { d: `M${cx} ${cy - 8} L${cx + 8} ${cy} L${cx} ${cy + 8} L${cx - 8} ${cy} z`, class: 'fork' }, svg);
    }
  }
  // Pieces.
  v.board.forEach((row, i) => {
    [...row].forEach((c, file) => {
      if (c === '.') return;
      const sq = squareName(file, n - 1 - i);
      const [cx, cy] = center(sq, n);
      const g = el('g', { class: `piece ${c === 'a' ? 'attacker' : c === 'd' ? 'defender' : 'king'}`, 'data-piece': sq }, svg);
      el('circle', { cx, cy, r: CELL * 0.36 }, g);
      if (c === 'k') {
        if (v.danger.surrounded) el('circle', { cx, cy, r: CELL * 0.45, class: 'danger' }, g);
        el('path', { d: `M${cx} ${cy - 11} V${cy + 11} M${cx - 9} ${cy - 3} H${cx + 9}`, class: 'cross' }, g);
      }
    });
  });
  // Captures of the last move.
  if (last) {
    for (const c of last.captured) {
      const [cx, cy] = center(c, n);
      el('path', { d: `M${cx - 9} ${cy - 9} L${cx + 9} ${cy + 9} M${cx + 9} ${cy - 9} L${cx - 9} ${cy + 9}`, class: 'captured', 'data-captured': c }, svg);
    }
  }
  // Legal targets of the selected piece.
  for (const t of targets) {
    const [cx, cy] = center(t, n);
    el('circle', { cx, cy, r: 7, class: 'target', 'data-target': t }, svg);
  }
  // The analysis' best move.
  if (st.tab === 'analyse' && st.best) {
    const [from, to] = st.best.split('-');
    if (from && to && v.legal[from]) {
      const [x1, y1] = center(from, n), [x2, y2] = center(to, n);
      el('line', { x1, y1, x2, y2, class: 'best', 'marker-end': 'url(#arrowhead)' }, svg);
    }
  }
}

function drawValueBar(valueAttackers) {
  const fill = $('#valuebar-fill');
  if (valueAttackers === null || valueAttackers === undefined) {
    fill.style.height = '50%';
    $('#valuebar-text').textContent = '';
    return;
  }
  // Dark (attackers) grows from the top.
  fill.style.height = `${(50 * (1 + valueAttackers)).toFixed(1)}%`;
  $('#valuebar-text').textContent = (valueAttackers >= 0 ? '+' : '') + valueAttackers.toFixed(2);
}

function drawMoveList() {
  const ol = $('#movelist');
  ol.innerHTML = '';
  const plies = st.moves;
  for (let i = 0; i < plies.length; i += 2) {
    const li = document.createElement('li');
    for (const j of [i, i + 1]) {
      if (j >= plies.length) break;
      const span = document.createElement('span');
      span.textContent = plies[j];
      span.className = 'ply' + (j === st.cursor - 1 ? ' current' : '');
      span.dataset.ply = j + 1;
      span.onclick = () => goTo(j + 1);
      li.appendChild(span);
    }
    ol.appendChild(li);
  }
  ol.scrollTop = ol.scrollHeight;
  $('#cursor').textContent = `ply ${st.cursor} of ${st.moves.length}`;
}

// ---------- game ----------

function humanToMove(view) {
  const side = $('#side').value;
  return side === 'both' || side === view.side_to_move;
}

async function show(view, keepStatus) {
  st.view = view;
  st.selected = null;
  st.policy = null;
  st.best = null;
  drawBoard();
  drawMoveList();
  if (!keepStatus) say(describe(view), view.outcome ? 'over' : '');
  if (st.tab === 'analyse') startAnalysis();
}

async function goTo(ply) {
  if (st.tab === 'play' && ply !== st.moves.length) setTab('analyse');
  stopEngine();
  st.cursor = Math.max(0, Math.min(ply, st.moves.length));
  try { await show(await api('/api/game', gameRequest())); } catch (e) { say(e.message, 'error'); }
}

async function loadGame(start, moves, cursor) {
  stopEngine();
  st.start = start;
  st.moves = moves;
  st.cursor = cursor ?? moves.length;
  await show(await api('/api/game', gameRequest()));
}

async function tryMove(from, to) {
  const move = `${from}-${to}`;
  const moves = [...st.moves.slice(0, st.cursor), move];
  try {
    const view = await api('/api/game', gameRequest(moves));
    st.moves = view.plies.map((p) => p.text);
    st.cursor = st.moves.length;
    await show(view);
    maybeEngine();
  } catch (e) {
    st.selected = null;
    drawBoard();
    say(`Illegal: ${e.message}`, 'error');
  }
}

function onBoardClick(ev) {
  const target = ev.target.closest('[data-sq], [data-piece], [data-target]');
  const v = st.view;
  if (!target || !v || st.engine) return;
  const sq = target.dataset.sq || target.dataset.piece || target.dataset.target;
  if (st.tab === 'play' && !humanToMove(v)) { say(`Wait: it is the engine's move.`, 'error'); return; }
  if (st.selected && sq === st.selected) { st.selected = null; drawBoard(); return; }
  if (v.legal[sq]) { st.selected = sq; drawBoard(); return; }
  if (st.selected) { tryMove(st.selected, sq); return; }
  if (target.dataset.piece) say(v.outcome ? 'The game is over.' : `That piece cannot move now: the ${v.side_to_move} are to move.`, 'error');
}

function stopEngine() {
  if (st.engine) { st.engine.abort(); st.engine = null; }
}

async function engineMove() {
  const v = st.view;
  if (!v || v.outcome || st.engine) return;
  const controller = new AbortController();
  st.engine = controller;
  const player = $('#player').value;
  say(`${player} is thinking…`, 'thinking');
  try {
    const res = await api('/api/engine', { ...gameRequest(), player, time_ms: Number($('#movetime').value) }, controller.signal);
    if (st.engine !== controller) return;
    st.engine = null;
    st.moves = res.game.plies.map((p) => p.text);
    st.cursor = st.moves.length;
    await show(res.game, true);
    const c = res.choice;
    const value = c.value_attackers === null ? '' : `, value ${c.value_attackers >= 0 ? '+' : ''}${c.value_attackers.toFixed(2)} for the attackers`;
    say(`${res.player} played ${c.move}${value}. ${describe(res.game)}`, res.game.outcome ? 'over' : '');
    drawValueBar(c.value_attackers);
  } catch (e) {
    if (st.engine === controller) st.engine = null;
    if (e.name !== 'AbortError') say(`Engine: ${e.message}`, 'error');
  }
}

function maybeEngine() {
  if (st.tab === 'play' && st.view && !st.view.outcome && !humanToMove(st.view)) engineMove();
}

async function newGame() {
  stopEngine();
  await loadGame(null, []);
  maybeEngine();
}

async function takeBack() {
  stopEngine();
  if (!st.moves.length) return;
  // Back to the last position where it is the person's turn.
  let moves = st.moves.slice(0, st.cursor - 1);
  if ($('#side').value !== 'both') {
    const human = $('#side').value;
    while (moves.length) {
      const view = await api('/api/game', gameRequest(moves));
      if (view.side_to_move === human) break;
      moves = moves.slice(0, -1);
    }
  }
  await loadGame(st.start, moves);
}

// ---------- import / export ----------

async function importText(text) {
  try {
    const res = await api('/api/record', { variant: st.variant, text });
    await loadGame(res.game.standard_start ? null : res.game.start, res.game.plies.map((p) => p.text));
    const what = res.game.plies.length ? `game ${res.number} of ${res.games}, ${res.game.plies.length} plies` : 'position';
    say(`Loaded the ${what}. ${describe(res.game)}`);
  } catch (e) {
    say(`Cannot load: ${e.message}`, 'error');
  }
}

function exportText(kind) {
  const v = st.view;
  if (!v) return;
  const full = st.moves.length === st.cursor ? v : null;
  let text = v.fen;
  if (kind === 'record') text = (v.standard_start ? '' : `# start ${v.start}\n`) + (full ? v.record : st.moves.slice(0, st.cursor).join(' '));
  if (kind === 'opentafl') text = v.opentafl;
  $('#io').value = text;
  $('#io').select();
  if (navigator.clipboard) navigator.clipboard.writeText(text).catch(() => {});
  say(`${kind === 'fen' ? 'FEN' : kind === 'record' ? 'Record' : 'OpenTafl position'} in the box (and copied when the browser allows).`);
}

// ---------- analysis ----------

function stopAnalysis() {
  if (st.analysis) { st.analysis.abort(); st.analysis = null; }
}

// What a search event says of its effort: visits for an MCTS, depth and nodes for alpha-beta.
function effort(s) {
  const n = s.nodes_total.toLocaleString();
  return s.unit === 'visits' ? `${n} visits, a line of ${s.depth} plies` : `depth ${s.depth}, ${n} nodes`;
}

async function startAnalysis() {
  stopAnalysis();
  const v = st.view;
  for (const id of ['#a-value', '#a-best', '#a-pv', '#a-search', '#a-net']) $(id).textContent = '–';
  $('#policy-list').innerHTML = '';
  st.policy = null;
  st.best = null;
  if (!v || v.outcome) { drawValueBar(null); return; }
  const controller = new AbortController();
  st.analysis = controller;
  $('#a-search').textContent = 'thinking…';
  const body = { ...gameRequest(), player: $('#analyser').value, ms: Number($('#thinktime').value) };
  try {
    await postEvents('/api/analyse', body, controller.signal, {
      policy: (p) => {
        st.policy = p;
        $('#a-net').textContent = `value ${fmt(p.value_attackers)} (attackers' view); ${p.moves.length} moves`;
        $('#policy-list').innerHTML = p.moves.slice(0, 6).map(([f, t, q]) => `<span class="prior">${f}-${t} <b>${(100 * q).toFixed(1)}%</b></span>`).join('');
        drawBoard();
      },
      // The server sends only rounds at least as deep as the one before: the last is the answer.
      search: (s) => {
        st.best = s.move;
        $('#a-value').textContent = s.value_attackers === null ? 'none' : `${fmt(s.value_attackers)} (attackers' view)`;
        $('#a-best').textContent = s.move;
        $('#a-pv').textContent = s.pv.join(' ');
        $('#a-search').textContent = `${s.player}: ${effort(s)}, ${(s.elapsed_ms / 1000).toFixed(1)} s`;
        drawValueBar(s.value_attackers);
        drawBoard();
      },
      failed: (e) => say(`Analysis: ${e.error}`, 'error'),
    });
    if (st.analysis === controller) { st.analysis = null; $('#a-search').textContent += ' (done)'; }
  } catch (e) {
    if (st.analysis === controller) st.analysis = null;
    if (e.name !== 'AbortError') say(`Analysis: ${e.message}`, 'error');
  }
}

function fmt(v) { return v === null || v === undefined ? '–' : (v >= 0 ? '+' : '') + v.toFixed(2); }

async function valueGraph() {
  if (st.graph) st.graph.abort();
  st.values = [];
  const controller = new AbortController();
  st.graph = controller;
  drawGraph();
  const body = { variant: st.variant, start: st.start, moves: st.moves, player: $('#analyser').value, ms: 150 };
  try {
    await postEvents('/api/game-values', body, controller.signal, {
      value: (p) => { st.values.push(p); drawGraph(); },
      failed: (e) => say(`Value graph: ${e.error}`, 'error'),
    });
  } catch (e) {
    if (e.name !== 'AbortError') say(`Value graph: ${e.message}`, 'error');
  }
  if (st.graph === controller) st.graph = null;
}

function drawGraph() {
  const xs = st.values.map((p) => p.ply);
  const ys = st.values.map((p) => p.value_attackers);
  const data = [xs, ys];
  const box = $('#value-graph');
  if (!st.charts.graph) {
    st.charts.graph = new uPlot({
      width: box.clientWidth || 420, height: 180,
      scales: { x: { time: false }, y: { range: [-1, 1] } },
      legend: { show: false },
      series: [{ label: 'ply' }, { label: 'value', stroke: '#1f6fd1', width: 2, fill: 'rgba(31,111,209,0.12)', spanGaps: true }],
      axes: [{ label: 'ply' }, { label: 'attackers ↑' }],
    }, data, box);
    st.charts.graph.over.addEventListener('click', () => {
      const idx = st.charts.graph.cursor.idx;
      if (idx !== null && idx !== undefined) goTo(st.values[idx].ply);
    });
  } else {
    st.charts.graph.setData(data);
  }
}

// ---------- watch a run ----------

const COLORS = ['#c0392b', '#1f6fd1', '#27ae60', '#8e44ad', '#d68910', '#16a085', '#7f8c8d'];

function chart(name, title, xLabel, series, tables) {
  // `tables`: one [xs, ys…] per group of series; uPlot.join aligns them on one x axis.
  const box = $(`#chart-${name}`);
  const data = tables.length === 1 ? tables[0] : uPlot.join(tables);
  if (st.charts[name] && st.charts[name].series.length === series.length + 1) {
    st.charts[name].setData(data);
    return;
  }
  if (st.charts[name]) st.charts[name].destroy();
  st.charts[name] = new uPlot({
    width: box.clientWidth || 440, height: 220,
    scales: { x: { time: false } },
    series: [{ label: xLabel }, ...series.map((s, i) => ({ label: s, stroke: COLORS[i % COLORS.length], width: 2, spanGaps: true, points: { size: 5 } }))],
    axes: [{ label: xLabel }, { label: title }],
  }, data, box);
}

function num(v) { return typeof v === 'number' && isFinite(v) ? v : null; }

function drawRun(run) {
  const m = run.metrics;
  const t0 = Math.min(...m.map((e) => e.time).filter((t) => typeof t === 'number'));
  const hours = (e) => (e.time - t0) / 3600;
  const opt = m.filter((e) => e.event === 'optimize');
  chart('loss', 'loss', 'iteration', ['total', 'policy', 'value'], [[opt.map((e) => e.iteration), opt.map((e) => num(e.loss)), opt.map((e) => num(e.policy_loss)), opt.map((e) => num(e.value_loss))]]);
  const evals = m.filter((e) => e.event === 'eval');
  const opponents = [...new Set(evals.map((e) => e.opponent))];
  if (opponents.length) {
    chart('elo', 'Elo', 'hours', opponents.map((o) => `vs ${o}`), opponents.map((o) => {
      const rows = evals.filter((e) => e.opponent === o);
      return [rows.map(hours), rows.map((e) => Math.max(-800, Math.min(800, num(e.elo) ?? 0)))];
    }));
  } else {
    chart('elo', 'Elo', 'hours', ['no evaluation yet'], [[[], []]]);
  }
  const sp = m.filter((e) => e.event === 'selfplay');
  const spx = sp.map(hours);
  chart('speed', 'per second', 'hours', ['net evaluations/s', 'moves/s', 'games/min'], [[spx, sp.map((e) => num(e.evals_per_s)), sp.map((e) => num(e.moves_per_s)), sp.map((e) => 60 * (num(e.games_per_s) ?? 0))]]);
  const share = (k) => sp.map((e) => (e.games ? e[k] / e.games : null));
  chart('sides', 'share of games', 'hours', ['attackers win', 'defenders win', 'draw'], [[spx, share('attacker_wins'), share('defender_wins'), share('draws')]]);

  const games = sp.reduce((a, e) => a + (e.games || 0), 0);
  const last = opt.length ? opt[opt.length - 1] : null;
  $('#run-summary').innerHTML = `<b>${esc(run.path)}</b> · ${esc(run.variant)} · ${opt.length} training rounds · ${games} self-play games · best model <b>${esc(run.best || '–')}</b>` +
    (last && num(last.loss) !== null ? ` · last loss ${last.loss.toFixed(3)}` : '') + ` · <span id="live" class="live">● live, updated ${new Date().toLocaleTimeString()}</span>`;

  const rows = run.models.slice().reverse().map((md) => {
    const meta = md.meta || {};
    const gate = md.gate ? `${(100 * md.gate.score).toFixed(0)}% ${md.gate.passed ? 'passed' : 'failed'}` : '';
    const ev = md.eval && md.eval.opponents ? md.eval.opponents.map((o) => `${esc(o.opponent || o.name || '')} ${o.elo !== undefined ? (o.elo >= 0 ? '+' : '') + Number(o.elo).toFixed(0) : ''}`).join(', ') : '';
    const evm = evals.filter((e) => e.model === md.id).map((e) => `${esc(e.opponent)} ${(100 * e.score).toFixed(0)}% (Elo ${e.elo >= 0 ? '+' : ''}${Number(e.elo).toFixed(0)})`).join(', ');
    return `<tr${md.id === run.best ? ' class="best"' : ''}><td>${esc(md.id)}</td><td>${meta.iteration ?? ''}</td><td>${esc(meta.net || '')}</td><td>${meta.samples_seen ?? ''}</td><td>${meta.created ? new Date(meta.created * 1000).toLocaleString() : ''}</td><td>${gate}</td><td>${evm || ev}</td></tr>`;
  });
  $('#models').innerHTML = '<tr><th>model</th><th>iteration</th><th>net</th><th>samples seen</th><th>written</th><th>gate</th><th>evaluation</th></tr>' + rows.join('');

  $('#games').innerHTML = '<tr><th>source</th><th>game</th><th>plies</th><th>result</th></tr>' + run.games.map((g, i) => {
    const cols = g.record.split(',');
    const plies = cols[0].trim() ? cols[0].trim().split(/\s+/).filter((w) => w !== 'timeout').length : 0;
    const result = { Black: 'attackers win', White: 'defenders win', Draw: 'draw' }[cols[3]] || cols[3] || '';
    return `<tr class="game" data-game="${i}"><td>${esc(g.source)}</td><td>${esc(g.title)}</td><td>${plies}</td><td>${esc(result)}</td></tr>`;
  }).join('');
  for (const tr of document.querySelectorAll('#games tr.game')) {
    tr.onclick = async () => {
      const g = run.games[Number(tr.dataset.game)];
      if (st.info.variants.some((v) => v.name === run.variant)) { st.variant = run.variant; $('#variant').value = run.variant; }
      setTab('analyse');
      await importText(g.record);
      goTo(0);
    };
  }
}

function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c])); }

async function watch(n) {
  st.run = n;
  if (st.runLive) st.runLive.close();
  document.querySelectorAll('#runs button').forEach((b) => b.classList.toggle('active', Number(b.dataset.run) === n));
  const refresh = async () => {
    try { drawRun(await api(`/api/runs/${n}`)); } catch (e) { $('#run-summary').textContent = e.message; }
  };
  await refresh();
  const es = new EventSource(`/api/runs/${n}/live`);
  es.addEventListener('changed', refresh);
  st.runLive = es;
}

// ---------- tabs and set-up ----------

function setTab(tab) {
  st.tab = tab;
  document.querySelectorAll('.tab').forEach((b) => b.classList.toggle('active', b.dataset.tab === tab));
  for (const t of ['play', 'analyse', 'watch']) $(`#panel-${t}`).classList.toggle('hidden', t !== tab);
  $('#board-area').classList.toggle('hidden', tab === 'watch');
  $('#steps').classList.toggle('hidden', tab !== 'analyse');
  $('#valuebar').classList.toggle('hidden', tab === 'watch');
  if (tab === 'analyse') { startAnalysis(); if (st.charts.graph) st.charts.graph.setSize({ width: $('#value-graph').clientWidth, height: 180 }); } else stopAnalysis();
  if (tab === 'play') { st.cursor = st.moves.length; goTo(st.cursor); }
  if (tab === 'watch' && st.run === null && st.info.runs.length) watch(0);
  if (tab === 'watch' && !st.info.runs.length) $('#run-summary').textContent = 'No run is watched: start the server with --run DIR.';
  drawBoard();
}

async function init() {
  st.info = await api('/api/info');
  $('#server').textContent = `tafl ${st.info.version}`;
  $('#variant').innerHTML = st.info.variants.map((v) => `<option value="${esc(v.name)}">${esc(v.name)} (${v.size}×${v.size})</option>`).join('');
  st.variant = st.info.variants[0].name;
  // The players the server offers (its operator chose them): the page picks among them only.
  const options = st.info.players.map((p) => `<option value="${esc(p)}">${esc(p)}</option>`).join('');
  $('#player').innerHTML = options;
  $('#analyser').innerHTML = options;
  $('#player').value = st.info.player;
  $('#analyser').value = st.info.player;
  $('#analyser').onchange = () => { if (st.tab === 'analyse') startAnalysis(); };
  $('#runs').innerHTML = st.info.runs.map((r) => `<button data-run="${r.id}">${esc(r.path)}</button>`).join('');
  document.querySelectorAll('#runs button').forEach((b) => { b.onclick = () => watch(Number(b.dataset.run)); });

  document.querySelectorAll('.tab').forEach((b) => { b.onclick = () => setTab(b.dataset.tab); });
  $('#board').addEventListener('click', onBoardClick);
  $('#variant').onchange = () => { st.variant = $('#variant').value; newGame(); };
  $('#side').onchange = () => maybeEngine();
  $('#newgame').onclick = newGame;
  $('#takeback').onclick = takeBack;
  $('#flip').onclick = () => { st.flipped = !st.flipped; drawBoard(); };
  $('#enginemove').onclick = engineMove;
  $('#import').onclick = () => importText($('#io').value);
  $('#recordfile').onchange = async (e) => { const f = e.target.files[0]; if (f) { const t = await f.text(); $('#io').value = t.slice(0, 4000); importText(t); } };
  $('#io').addEventListener('drop', async (e) => { e.preventDefault(); const f = e.dataTransfer.files[0]; if (f) importText(await f.text()); });
  $('#export-fen').onclick = () => exportText('fen');
  $('#export-record').onclick = () => exportText('record');
  $('#export-opentafl').onclick = () => exportText('opentafl');
  $('#analyse-go').onclick = startAnalysis;
  $('#analyse-stop').onclick = () => { stopAnalysis(); $('#a-search').textContent += ' (stopped)'; };
  $('#heat').onchange = drawBoard;
  $('#graph-go').onclick = valueGraph;
  $('#first').onclick = () => goTo(0);
  $('#prev').onclick = () => goTo(st.cursor - 1);
  $('#next').onclick = () => goTo(st.cursor + 1);
  $('#last').onclick = () => goTo(st.moves.length);
  document.addEventListener('keydown', (e) => {
    if (st.tab !== 'analyse' || ['INPUT', 'TEXTAREA', 'SELECT'].includes(e.target.tagName)) return;
    const to = { ArrowLeft: st.cursor - 1, ArrowRight: st.cursor + 1, Home: 0, End: st.moves.length }[e.key];
    if (to !== undefined) { e.preventDefault(); goTo(to); }
  });
  setTab('play');
  await newGame();
}

init().catch((e) => say(`Cannot start: ${e.message}`, 'error'));
