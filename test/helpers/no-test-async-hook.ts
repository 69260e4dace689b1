// Loaded before each test file (scripts/test.ts passes `--import` with this file). node:test's harness
// enables an async hook in every test process: it maps each async resource to the test that created it
// (that is how `before`/`it` inside a describe's body find their suite, and which test an uncaught
// exception is blamed on), and deletes the entry in `destroy`. For promises that hook makes V8 call `init`
// for every promise and track the end of each one: in a file that serves thousands of requests
// in-process, 17–35 % of the file's CPU (route-fuzz on SQLite 21.0–21.8 s against 16.7–18.5 s; this
// machine's page faults are dear). Here the harness's hook is made with `trackPromises: false`: tests,
// suites, hooks, timers and sockets are still mapped, promises are not. Production runs with no hook at all.
// What is lost: code after an `await` runs in no test's scope as far as the harness can tell, so an
// exception thrown there unheard is reported as the file's failure, not the test's (the file still fails);
// register `it`/`before` in a describe's synchronous body (as every file here does), not after an await.
import asyncHooks from 'node:async_hooks';

const createHook = asyncHooks.createHook;
asyncHooks.createHook = function createHookOutsideTheHarness(callbacks) {
  if (new Error().stack?.includes('internal/test_runner/harness'))
    return createHook.call(asyncHooks, { ...callbacks, trackPromises: false } as typeof callbacks);
  return createHook.call(asyncHooks, callbacks);
};
