# Run: python3 bench/experiments/memdb-vs-tempfile.py (docs/api.md "In-memory databases").
# memdb VFS vs a temporary WAL file: isolation between a reader and the writer, and speed.
import sqlite3, tempfile, os, time, sys
print('sqlite', sqlite3.sqlite_version)
def conns(kind):
    if kind == 'memdb':
        uri = 'file:/m%d?vfs=memdb' % time.perf_counter_ns()
        w = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=0.2)
        r = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=0.2)
    else:
        d = tempfile.mkdtemp(); f = os.path.join(d, 'db')
        w = sqlite3.connect(f, isolation_level=None, timeout=0.2)
        print(' journal_mode', w.execute('PRAGMA journal_mode=WAL').fetchone()[0], end='')
        w.execute('PRAGMA synchronous=NORMAL')
        r = sqlite3.connect(f, isolation_level=None, timeout=0.2)
    return w, r
for kind in ['memdb', 'tempfile']:
    w, r = conns(kind)
    if kind == 'memdb': print(' journal_mode (asked WAL)', w.execute('PRAGMA journal_mode=WAL').fetchone()[0], end='')
    w.execute('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)')
    w.execute("INSERT INTO t(v) VALUES ('a')")
    # A reader in the middle of a read transaction, then a write commits.
    r.execute('BEGIN'); r.execute('SELECT count(*) FROM t').fetchone()
    t0 = time.perf_counter()
    try:
        w.execute("INSERT INTO t(v) VALUES ('b')"); res = 'commit went through'
    except sqlite3.OperationalError as e:
        res = 'writer blocked: %s after %.0f ms' % (e, (time.perf_counter()-t0)*1000)
    seen = r.execute('SELECT count(*) FROM t').fetchone()[0]; r.execute('COMMIT')
    # A writer in the middle of a write transaction; can a reader read?
    w.execute('BEGIN IMMEDIATE'); w.execute("INSERT INTO t(v) VALUES ('c')")
    try: rr = 'reader reads %d rows' % r.execute('SELECT count(*) FROM t').fetchone()[0]
    except sqlite3.OperationalError as e: rr = 'reader blocked: %s' % e
    w.execute('COMMIT')
    n = 20000
    t0 = time.perf_counter()
    for i in range(n): w.execute('INSERT INTO t(v) VALUES (?)', ('x'*20,))
    ins = (time.perf_counter()-t0)/n*1e6
    t0 = time.perf_counter()
    for i in range(n): r.execute('SELECT v FROM t WHERE id = ?', (i % 1000 + 1,)).fetchone()
    sel = (time.perf_counter()-t0)/n*1e6
    print('\n%s: %s; reader saw %d rows in its snapshot; during a write txn: %s; autocommit insert %.1f us, point select %.1f us' % (kind, res, seen, rr, ins, sel))
