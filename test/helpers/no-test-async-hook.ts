// Loaded before each test file (scripts/test.ts passes `--import` with this file). node:test's harness
// enables an async hook with `init` and `destroy` in every test process, only to tell which test an
// uncaught exception came from. A `destroy` hook makes V8 track the end of every promise: in a file that
// serves thousands of requests in-process, that hook cost 17–24 % of the file's CPU (route-fuzz on SQLite,
// 21.0–21.8 s against 16.7–18.5 s without it, and 28 % fewer page faults; 2026-11-29, a machine whose page
// faults are dear). Production runs with no such hook, so without it the tests run the code as it is served.
// What is lost: an uncaught exception is reported as the file's own failure ("a resource generated
// asynchronous activity after the test ended …"), not against the test that caused it; the file still fails.
import asyncHooks from 'node:async_hooks';

const createHook = asyncHooks.createHook;
asyncHooks.createHook = function createHookOutsideTheHarness(callbacks) {
  if (new Error().stack?.includes('internal/test_runner/harness')) {
    const inert = { enable: () => inert, disable: () => inert };
    return inert as unknown as ReturnType<typeof createHook>;
  }
  return createHook.call(asyncHooks, callbacks);
};
