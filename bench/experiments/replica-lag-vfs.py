# The replica side of bench/experiments/replica-lag.mjs for Litestream's VFS: Debian's Python
# and SQLite (resqlite cannot open a database through a VFS). Loads the extension, opens the
# replica URI, prints "ready", polls max(id) every ~1 ms, and on a line on stdin prints what it
# saw as JSON: { polled: [[maxId, ms]], emitted: [] }.
import json, select, sqlite3, sys, time

so, uri = sys.argv[1], sys.argv[2]
boot = sqlite3.connect(':memory:')
boot.enable_load_extension(True)
boot.load_extension(so)
db = sqlite3.connect(uri, uri=True)
polled, last = [], None
print('ready', flush=True)
while len(sys.argv) <= 4:
    m = db.execute('SELECT coalesce(max(id), 0) FROM t').fetchone()[0]
    if m != last:
        polled.append([m, time.time() * 1000])
        last = m
    if select.select([sys.stdin], [], [], 0.001)[0]:
        break
if len(sys.argv) <= 4:
    print(json.dumps({'polled': polled, 'emitted': []}), flush=True)

if len(sys.argv) > 4 and sys.argv[3] == 'reads':
    local = sqlite3.connect(sys.argv[4])
    db.backup(local)
    m = db.execute('SELECT max(id) FROM t').fetchone()[0]
    ident = lambda i: 1 + (i * 7919) % (m - 100)
    shapes = {
        'point': lambda c, i: c.execute('SELECT * FROM t WHERE id = ?', (ident(i),)).fetchone(),
        'range100': lambda c, i: c.execute('SELECT * FROM t WHERE id BETWEEN ? AND ?', (ident(i), ident(i) + 99)).fetchall(),
    }
    out = {}
    for shape, run in shapes.items():
        def round_(c):
            start = time.perf_counter()
            for i in range(2000):
                run(c, i)
            return (time.perf_counter() - start) * 1e6 / 2000
        times = {'replica': [], 'local': []}
        for _ in range(7):
            times['replica'].append(round_(db))
            times['local'].append(round_(local))
        out[shape] = {k: sorted(v)[3] for k, v in times.items()}
    print(json.dumps(out), flush=True)
