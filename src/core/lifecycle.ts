/**
 * Where this process is in its life. `draining` turns true on SIGTERM (src/shutdown.ts): /readyz
 * answers 503 `draining` so a load balancer moves traffic away, and every answer closes its
 * connection, while in-flight requests and job steps finish.
 */
export class Lifecycle {
  draining = false;
}
