// Renders window.BENCH (data.js, written by site/build.mjs) with Chart.js.
;(() => {
  const D = window.BENCH
  const COLORS = {
    resqlite: '#e8590c',
    'better-sqlite3': '#1971c2',
    'node-sqlite': '#2f9e44',
    sqlite3: '#868e96',
    libsql: '#7048e8',
    powersync: '#f08c00',
  }
  const LINE_COLORS = [
    '#e8590c',
    '#1971c2',
    '#2f9e44',
    '#7048e8',
    '#c2255c',
    '#0c8599',
    '#f08c00',
    '#5c940d',
    '#495057',
  ]
  Chart.defaults.animation = false
  Chart.defaults.maintainAspectRatio = false

  const el = (tag, attrs, ...children) => {
    const e = document.createElement(tag)
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v)
    for (const c of children) e.append(c)
    return e
  }
  const unique = (xs) => [...new Set(xs)]

  // ---- header
  const env = D.latest.environment || {}
  document.getElementById('run-info').textContent =
    `Peers from the latest suite run (full, every lane, every library): ${D.latest.label} (${D.latest.date}) — ${env.cpu || '?'}, ${env.cores || '?'} cores, Node ${env.nodeLanes || '?'}` +
    `${env.resqliteCommit ? `, resqlite ${env.resqliteCommit}` : ''}. ${D.history.length} full runs in the history.`
  const peers = document.getElementById('peers')
  for (const p of D.latest.peers || D.latest.libraries.map((lib) => ({ lib, present: true }))) {
    peers.append(
      el(
        'li',
        { class: p.present ? 'present' : 'absent' },
        `${p.lib}: ${p.present ? 'present' : `absent (${p.reason})`}`,
      ),
    )
  }

  const chart = (canvas, config) => new Chart(canvas, config)
  const logAxis = (title) => ({ type: 'logarithmic', title: { display: true, text: title } })

  // ---- peer comparison: one card per lane group, wall and JS-thread side by side
  const groupsEl = document.getElementById('groups')
  const cases = D.latest.cases
  for (const group of unique(cases.map((c) => c.group))) {
    const inGroup = cases.filter((c) => c.group === group)
    const ids = unique(inGroup.map((c) => c.id))
    const libs = D.latest.libraries.filter((lib) => inGroup.some((c) => c.lib === lib))
    const card = el('div', { class: 'group', 'data-group': group }, el('h3', {}, group))
    const pair = el('div', { class: 'pair' })
    card.append(pair)
    groupsEl.append(card)
    const metrics = [
      ['wall', 'wall ms'],
      ['js', 'JS-thread ms'],
    ]
    if (inGroup.some((c) => c.rss !== undefined && c.rss !== null)) metrics.push(['rss', 'RSS growth MB'])
    // web: p99 page latency per library, alone (web.pages) and with the report running (web.report)
    if (inGroup.some((c) => c.p99 !== undefined && c.p99 !== null)) metrics.push(['p99', 'p99 ms'])
    for (const [metric, title] of metrics) {
      const canvas = el('canvas', { id: `chart-${group}-${metric}`, 'data-kind': 'peers' })
      pair.append(el('div', { class: 'chart' }, canvas))
      chart(canvas, {
        type: 'bar',
        data: {
          labels: ids,
          datasets: libs.map((lib) => ({
            label: lib,
            backgroundColor: COLORS[lib] || '#999',
            data: ids.map((id) => {
              const c = inGroup.find((x) => x.id === id && x.lib === lib)
              const v = c ? c[metric] : null
              // log axis: a zero (e.g. no RSS growth) cannot be drawn; show it at the floor
              return v === null || v === undefined ? null : Math.max(v, 0.001)
            }),
          })),
        },
        options: { plugins: { title: { display: true, text: `${group}: ${title}` } }, scales: { y: logAxis(title) } },
      })
    }
  }

  // ---- history: resqlite's wall medians per group over the full runs
  const histEl = document.getElementById('history-charts')
  const labels = D.history.map((h) => `${h.date.slice(5, 16).replace('T', ' ')} ${h.label}`)
  const allIds = unique(D.history.flatMap((h) => Object.keys(h.cases)))
  const groupOf = (id) => D.history.map((h) => h.cases[id]).find(Boolean).group
  for (const group of unique(allIds.map(groupOf))) {
    const ids = allIds.filter((id) => groupOf(id) === group)
    const canvas = el('canvas', { id: `history-${group}`, 'data-kind': 'history' })
    histEl.append(el('div', { class: 'group' }, el('div', { class: 'chart' }, canvas)))
    chart(canvas, {
      type: 'line',
      data: {
        labels,
        datasets: ids.map((id, i) => ({
          label: id,
          borderColor: LINE_COLORS[i % LINE_COLORS.length],
          backgroundColor: LINE_COLORS[i % LINE_COLORS.length],
          spanGaps: true,
          data: D.history.map((h) => (h.cases[id] ? h.cases[id].wall : null)),
        })),
      },
      options: {
        plugins: { title: { display: true, text: `${group}: resqlite wall ms` } },
        scales: { y: logAxis('wall ms') },
      },
    })
  }

  // ---- experiments, with a status filter
  const tbody = document.getElementById('experiment-rows')
  for (const e of D.experiments) {
    tbody.append(
      el(
        'tr',
        { 'data-status': e.status },
        el('td', {}, e.n),
        el('td', {}, el('a', { href: e.href }, e.title)),
        el('td', {}, el('span', { class: `status ${e.status.replace(' ', '-')}` }, e.status)),
        el('td', {}, e.impact),
      ),
    )
  }
  for (const b of document.querySelectorAll('#filters button')) {
    b.addEventListener('click', () => {
      for (const o of document.querySelectorAll('#filters button')) o.classList.toggle('active', o === b)
      for (const tr of tbody.rows) tr.hidden = b.dataset.filter !== 'all' && tr.dataset.status !== b.dataset.filter
    })
  }
  window.__siteReady = true
})()
