// Renders `catalog.audit()` for an operator: a terminal table (most urgent first) and a
// self-contained HTML page (totals, per-server bars, a sortable table). No network, no
// dependencies: the page's script is inline and every catalog string is escaped.
'use strict'

/** What each problem means, in the operator's words (the same order as the audit's weights). */
const PROBLEMS = {
  unfindable: 'not in the top 10 for its own name or description',
  'empty-description': 'no description: the model sees only the name',
  'outranked-duplicate': "another server's near-identical tool ranks above it",
  'duplicated-description': 'the same description as other tools',
  'name-collision': 'the same name as other tools once case, accents and separators are dropped',
  'short-description': 'a description too short to say what it does',
  'costly-schema': 'its input schema is costly to validate',
  'large-schema': 'its input schema is large in the prompt (over 1,000 tokens)',
}

function clip(text, max) {
  const flat = String(text ?? '').replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

function textTable(rows, columns) {
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)))
  const line = (cells) => cells.map((cell, i) => String(cell ?? '').padEnd(widths[i])).join('  ').trimEnd()
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(columns.map((c) => r[c])))].join('\n')
}

/** The first thing to do about a tool, in one line. */
function advice(tool) {
  const [problem] = tool.problems
  switch (problem) {
    case 'unfindable': {
      const first = tool.probes.find((p) => p.first)?.first
      return `rewrite its description${first ? `; ${first} ranks first for its requests` : ''}`
    }
    case 'empty-description':
      return 'write a description'
    case 'outranked-duplicate':
      return `duplicate of ${tool.nearDuplicates.find((d) => d.winner !== tool.id)?.winner ?? 'another tool'}: remove one server's copy`
    case 'duplicated-description':
      return `same description as ${tool.sameDescription[0]}${tool.sameDescriptionCount > 1 ? ` and ${tool.sameDescriptionCount - 1} more` : ''}`
    case 'name-collision':
      return `same name as ${tool.nameCollisions[0]}${tool.nameCollisionCount > 1 ? ` and ${tool.nameCollisionCount - 1} more` : ''}`
    case 'short-description':
      return 'say what it does, on what, and what it returns'
    case 'costly-schema':
      return `validation applies ${tool.schemaChecksPerValue} subschemas per value: simplify the schema`
    case 'large-schema':
      return `schema ~${tool.schemaTokens} tokens: trim descriptions or split the tool`
    default:
      return ''
  }
}

/** The terminal report: totals, the servers with most problems, the `limit` most urgent tools. */
function auditText(audit, { limit = 30 } = {}) {
  const t = audit.totals
  const lines = [
    `${t.tools} tools on ${t.servers} servers (${audit.ranking} ranking${audit.findability ? '' : ', findability not checked'}), audited in ${(audit.milliseconds / 1000).toFixed(1)} s`,
    `${t.withProblems} tools with problems: ${t.unfindable} unfindable, ${t.emptyDescriptions} empty descriptions, ${t.shortDescriptions} short, ${t.duplicatedDescriptions} copied, ${t.outrankedDuplicates} outranked duplicates (${t.nearDuplicatePairs} near-duplicate pairs), ${t.nameCollisions} colliding names, ${t.costlySchemas} costly and ${t.largeSchemas} large schemas`,
    `schemas: ${t.schemaBytes} bytes, ~${t.schemaTokens} tokens in all; ${t.excluded} records refused`,
    '',
    'Servers with the most tools to fix:',
    textTable(
      audit.servers.filter((s) => s.withProblems > 0).slice(0, 10).map((s) => ({ server: s.server, tools: s.tools, 'with problems': s.withProblems, unfindable: s.unfindable, 'schema tokens': s.schemaTokens })),
      ['server', 'tools', 'with problems', 'unfindable', 'schema tokens'],
    ),
    '',
  ]
  const urgent = audit.tools.filter((tool) => tool.problems.length > 0)
  lines.push(`Fix first (${Math.min(limit, urgent.length)} of ${urgent.length}; --limit N for more, --json or --html FILE for all):`)
  lines.push(
    textTable(
      urgent.slice(0, limit).map((tool) => ({
        id: clip(tool.id, 48),
        rank: tool.bestRank ?? (audit.findability ? '-' : '?'),
        problems: tool.problems.join(', '),
        'what to do': clip(advice(tool), 80),
      })),
      ['id', 'rank', 'problems', 'what to do'],
    ),
  )
  if (audit.excluded.length) {
    lines.push('', `Refused records (${audit.excluded.length}):`)
    lines.push(textTable(audit.excluded.slice(0, limit).map((e) => ({ index: e.index, name: clip(e.name ?? '', 40), reason: clip(e.reason, 90) })), ['index', 'name', 'reason']))
  }
  return lines.join('\n')
}

const escapeHtml = (text) =>
  String(text ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c])

/** A self-contained HTML page of the whole audit. */
function auditHtml(audit, { title = 'Tool catalog audit' } = {}) {
  const t = audit.totals
  const cards = [
    ['tools', t.tools],
    ['with problems', t.withProblems],
    ['unfindable', t.unfindable],
    ['empty descriptions', t.emptyDescriptions],
    ['outranked duplicates', t.outrankedDuplicates],
    ['colliding names', t.nameCollisions],
    ['schema tokens', t.schemaTokens],
    ['refused records', t.excluded],
  ]
    .map(([label, value]) => `<div class="card"><div class="value">${escapeHtml(value)}</div><div class="label">${escapeHtml(label)}</div></div>`)
    .join('')
  const servers = audit.servers.filter((s) => s.withProblems > 0).slice(0, 25)
  const widest = Math.max(1, ...servers.map((s) => s.tools))
  const bars = servers
    .map(
      (s) =>
        `<div class="bar-row"><span class="bar-label" title="${escapeHtml(s.server)}">${escapeHtml(clip(s.server, 32))}</span>` +
        `<span class="bar"><span class="ok" style="width:${(100 * (s.tools - s.withProblems)) / widest}%"></span>` +
        `<span class="bad" style="width:${(100 * (s.withProblems - s.unfindable)) / widest}%"></span>` +
        `<span class="lost" style="width:${(100 * s.unfindable) / widest}%"></span></span>` +
        `<span class="bar-count">${s.withProblems} / ${s.tools}</span></div>`,
    )
    .join('\n')
  const rows = audit.tools
    .map((tool) => {
      const problems = tool.problems.map((p) => `<span class="tag ${p}" title="${escapeHtml(PROBLEMS[p] ?? p)}">${escapeHtml(p)}</span>`).join(' ')
      const probes = tool.probes.map((p) => `${escapeHtml(p.from)}: “${escapeHtml(clip(p.request, 80))}” → ${p.rank ?? '–'}`).join('<br>')
      return (
        `<tr><td data-v="${tool.priority}">${tool.priority}</td><td>${escapeHtml(tool.id)}</td><td>${escapeHtml(tool.server)}</td>` +
        `<td data-v="${tool.bestRank ?? 99}">${tool.bestRank ?? '–'}</td><td>${problems}</td><td>${escapeHtml(advice(tool))}</td>` +
        `<td class="small">${probes}</td><td data-v="${tool.schemaTokens}">${tool.schemaTokens}</td></tr>`
      )
    })
    .join('\n')
  const legend = Object.entries(PROBLEMS)
    .map(([p, meaning]) => `<li><span class="tag ${p}">${escapeHtml(p)}</span> ${escapeHtml(meaning)}</li>`)
    .join('')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fafbfc}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}.sub{color:#5b6475}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin-top:16px}.card{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:10px 14px;min-width:120px}
.value{font-size:22px;font-weight:600}.label{color:#5b6475}
.bar-row{display:flex;align-items:center;gap:8px;margin:3px 0}.bar-label{width:240px;text-align:right;white-space:nowrap;overflow:hidden}
.bar{flex:1;display:flex;height:14px;background:#eef0f4;border-radius:3px;overflow:hidden}.ok{background:#9cc9a3}.bad{background:#f0b35e}.lost{background:#d9534f}
.bar-count{width:90px;color:#5b6475}
table{border-collapse:collapse;width:100%;background:#fff}th,td{border-bottom:1px solid #e6e9ef;padding:6px 8px;text-align:left;vertical-align:top}
th{position:sticky;top:0;background:#f1f3f7;cursor:pointer;user-select:none}th[aria-sort]::after{content:" ▾"}th[aria-sort=ascending]::after{content:" ▴"}
.tag{display:inline-block;border-radius:10px;padding:0 7px;margin:1px 0;font-size:12px;background:#e8eaf0}.unfindable{background:#f7c6c4}.empty-description,.outranked-duplicate{background:#fbe0b8}
.small{font-size:12px;color:#4a5263}input{margin:8px 0;padding:5px 8px;width:320px}
</style></head><body>
<h1>${escapeHtml(title)}</h1>
<div class="sub">${t.tools} tools on ${t.servers} servers · ${escapeHtml(audit.ranking)} ranking${audit.findability ? '' : ' · findability not checked'} · audited in ${(audit.milliseconds / 1000).toFixed(1)} s</div>
<div class="cards">${cards}</div>
<h2>Servers with tools to fix</h2>
<div class="sub">green: fine · orange: with problems · red: unfindable</div>
${bars || '<p>No server has a tool to fix.</p>'}
<h2>Tools, most urgent first</h2>
<ul class="small">${legend}</ul>
<input id="filter" type="search" placeholder="Filter by id, server or problem">
<table id="tools"><thead><tr><th data-type="number">priority</th><th>id</th><th>server</th><th data-type="number">best rank</th><th>problems</th><th>what to do</th><th>requests tried → rank</th><th data-type="number">schema tokens</th></tr></thead>
<tbody>
${rows}
</tbody></table>
<script>
(function () {
  var table = document.getElementById('tools');
  var body = table.tBodies[0];
  var headers = table.tHead.rows[0].cells;
  function key(row, i, numeric) {
    var cell = row.cells[i];
    var v = cell.getAttribute('data-v');
    return numeric ? Number(v === null ? cell.textContent : v) : cell.textContent.toLowerCase();
  }
  Array.prototype.forEach.call(headers, function (th, i) {
    th.addEventListener('click', function () {
      var numeric = th.getAttribute('data-type') === 'number';
      var ascending = th.getAttribute('aria-sort') !== 'ascending';
      Array.prototype.forEach.call(headers, function (h) { h.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a, i, numeric), y = key(b, i, numeric);
        return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
  document.getElementById('filter').addEventListener('input', function (event) {
    var needle = event.target.value.toLowerCase();
    Array.prototype.forEach.call(body.rows, function (row) {
      row.style.display = row.textContent.toLowerCase().indexOf(needle) >= 0 ? '' : 'none';
    });
  });
})();
</script>
</body></html>
`
}

module.exports = { auditText, auditHtml, PROBLEMS }
