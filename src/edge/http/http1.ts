import { createServer, type Server, type Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';

/**
 * The edge's own HTTP/1.1 server: a small, strict request parser on `node:net` that scans the bytes
 * of the head (no string of the whole head, no regular expressions), and responses written as one
 * header string plus the body, or for cache hits one prebuilt Buffer (one `write`). The edge answers
 * only GET, HEAD and OPTIONS, so there are no request bodies to stream: a `Content-Length` body is
 * read and discarded, and `Transfer-Encoding` or any malformed head gets 400 and the connection is
 * closed (no request smuggling). Requests on one connection are answered strictly in order
 * (pipelining works; the answers to one batch leave in one `writev`).
 * It exists because node:http's per-request objects cost about half the throughput of a cache hit.
 */

export interface EdgeRequest {
  method: string;
  url: string;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string | undefined>;
  socket: EdgePeer;
  /** Date.now() when the request was parsed (read once per batch: the handler need not read the clock again). */
  at: number;
}

/** The connection a request came on: the same object for every request on it. */
export interface EdgePeer {
  readonly remoteAddress: string | undefined;
  /** The handler's per-connection facts (client address lookups, the last Host's route), kept here so a keep-alive request does not repeat them. */
  memo: unknown;
}

export type HeaderInput = Record<string, string | number> | readonly string[];

export interface EdgeResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers?: HeaderInput): this;
  write(chunk: Buffer): boolean;
  /** Resolves true once written data has drained to the socket (at once if nothing waits), false if the connection closed. */
  drained(): Promise<boolean>;
  end(chunk?: Buffer | string): void;
  /** Cache-hit fast path: a 200 with the prepared headers, this Age (seconds) and the body. */
  sendHit(hit: PreparedHit, age: number): void;
  destroy(): void;
  once(event: 'close', listener: () => void): void;
}

const MAX_HEAD = 16 * 1024;
const MAX_DISCARDED_BODY = 1024 * 1024;
/** tchar (RFC 9110 §5.6.2): the bytes a header name may hold. */
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
  TCHAR[c.charCodeAt(0)] = 1;
/** Bytes a request target may not hold (what `\s` matched before, and controls). */
const NOT_TARGET = new Uint8Array(256);
for (let b = 0; b <= 32; b++) NOT_TARGET[b] = 1;
NOT_TARGET[127] = 1;
NOT_TARGET[0xa0] = 1;
/** Bytes a header value may not hold: controls other than HTAB (a bare CR or LF smuggles lines). */
const NOT_VALUE = new Uint8Array(256);
for (let b = 0; b < 32; b++) if (b !== 9) NOT_VALUE[b] = 1;
NOT_VALUE[127] = 1;
/** Header names the edge reads, interned so parsing them makes no string; others are lower-cased. */
const KNOWN_NAMES = [
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'range',
  'if-range',
  'if-none-match',
  'if-modified-since',
  'accept',
  'accept-encoding',
  'user-agent',
  'referer',
  'x-forwarded-for',
  'cookie',
  'authorization',
  'origin',
];
const KNOWN_BY_LENGTH: string[][] = [];
for (const name of KNOWN_NAMES) (KNOWN_BY_LENGTH[name.length] ??= []).push(name);
/** Header objects inherit nothing (a header called `constructor` or `__proto__` is just a header) yet stay fast objects. */
const HEADERS_PROTO = Object.freeze(Object.create(null) as object);
const STATUS_LINES: string[] = [];
for (const [code, text] of Object.entries(STATUS_CODES)) STATUS_LINES[Number(code)] = `HTTP/1.1 ${code} ${text}\r\n`;
const statusLine = (status: number) => STATUS_LINES[status] ?? `HTTP/1.1 ${status} Unknown\r\n`;

let dateSecond = -1;
let dateLine = '';
/** The clock read once for a batch of requests parsed from one read (0 outside of one). */
let batchNow = 0;
/** `date: …\r\n`, rebuilt at most once a second. */
function dateHeader(): string {
  const now = batchNow === 0 ? Date.now() : batchNow;
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateLine = `date: ${new Date(second * 1000).toUTCString()}\r\n`;
    releaseWires();
  }
  return dateLine;
}

/** Prebuilt hit answers larger than this are written as head + body (two buffers, one writev). */
const WIRE_MAX_BODY = 1024 * 1024;
/** Bytes of prebuilt answers one second may build; beyond it, hits fall back to head + body. */
const WIRE_BUDGET = 64 * 1024 * 1024;
let wiredBytes = 0;
let wired: PreparedHit[] = [];

/** A prebuilt answer carries this second's Date, so at the next second every one is dropped: memory stays bounded by what one second served. */
function releaseWires(): void {
  for (const hit of wired) hit.wire = null;
  wired = [];
  wiredBytes = 0;
}

/**
 * A cache hit prepared for the fast path: the header lines (each ending in CRLF, without Date, Age and
 * Connection) and the body. For keep-alive HTTP/1.1 GETs the server answers with one Buffer holding
 * status line, headers, Date, Age and body, built at most once per (second, Age) pair and shared by
 * every hit in that second: a hit costs one `socket.write` of a stored Buffer and no string encoding.
 * A written Buffer is never modified (a new one is built), so queued writes stay intact.
 */
export class PreparedHit {
  readonly head: string;
  readonly body: Buffer;
  wire: Buffer | null = null;
  private wireSecond = -1;
  private wireAge = -1;
  /** The (second, Age) of the last hit answered without a wire: a copy pays off only from the second hit on. */
  private seenSecond = -1;
  private seenAge = -1;
  constructor(head: string, body: Buffer) {
    this.head = head;
    this.body = body;
  }

  /**
   * The whole answer for this second and Age; null for the first hit with them (an object hit once a
   * second is not worth copying) and for bodies too big to keep a second copy of.
   */
  wireFor(age: number): Buffer | null {
    const date = dateHeader();
    if (this.wire !== null && this.wireSecond === dateSecond && this.wireAge === age) return this.wire;
    const body = this.body;
    if (body.length > WIRE_MAX_BODY || wiredBytes + body.length > WIRE_BUDGET) return null;
    if (this.seenSecond !== dateSecond || this.seenAge !== age) {
      this.seenSecond = dateSecond;
      this.seenAge = age;
      return null;
    }
    const head = `HTTP/1.1 200 OK\r\n${this.head}age: ${age}\r\n${date}\r\n`;
    const headLength = head.length; // latin1: one byte per character
    const wire = Buffer.allocUnsafeSlow(headLength + body.length);
    wire.write(head, 0, 'latin1');
    body.copy(wire, headLength);
    if (this.wire === null) wired.push(this);
    wiredBytes += wire.length;
    this.wire = wire;
    this.wireSecond = dateSecond;
    this.wireAge = age;
    return wire;
  }
}

/** Header values may not carry CR or LF (response splitting). */
function clean(value: string): string {
  return value.includes('\r') || value.includes('\n') ? value.replace(/[\r\n]+/g, ' ') : value;
}

class Response implements EdgeResponse {
  headersSent = false;
  finished = false;
  private head = '';
  private hasLength = false;
  private closeAfter = false;
  private listeners: (() => void)[] | null = null;
  private readonly conn: Connection;
  private readonly keepAlive: boolean;
  private readonly isHead: boolean;
  private readonly http10: boolean;
  constructor(conn: Connection, keepAlive: boolean, isHead: boolean, http10: boolean) {
    this.conn = conn;
    this.keepAlive = keepAlive;
    this.isHead = isHead;
    this.http10 = http10;
  }

  writeHead(status: number, headers?: HeaderInput): this {
    if (this.headersSent || this.head) throw new Error('headers already written');
    let h = statusLine(status);
    let hasLength = false;
    if (headers) {
      if (Array.isArray(headers)) {
        for (let i = 0; i < headers.length; i += 2) {
          const name = headers[i]!;
          if (name === 'content-length') hasLength = true;
          h += `${name}: ${clean(String(headers[i + 1]))}\r\n`;
        }
      } else {
        for (const name in headers) {
          if (name === 'content-length') hasLength = true;
          h += `${name}: ${clean(String((headers as Record<string, string | number>)[name]))}\r\n`;
        }
      }
    }
    this.hasLength = hasLength || status === 204 || status === 304 || (status >= 100 && status < 200);
    this.head = h;
    return this;
  }

  private flushHead(bodyFollowsWithoutLength: boolean): string {
    if (!this.head) this.writeHead(200);
    if (bodyFollowsWithoutLength && !this.hasLength) this.closeAfter = true;
    const keep = this.keepAlive && !this.closeAfter;
    this.closeAfter = !keep;
    const conn = keep ? (this.http10 ? 'connection: keep-alive\r\n' : '') : 'connection: close\r\n';
    const out = `${this.head}${dateHeader()}${conn}\r\n`;
    this.head = '';
    this.headersSent = true;
    return out;
  }

  write(chunk: Buffer): boolean {
    const socket = this.conn.socket;
    if (this.finished || socket.destroyed) return false;
    if (!this.headersSent) {
      socket.cork();
      socket.write(this.flushHead(true), 'latin1');
      const ok = this.isHead || socket.write(chunk);
      process.nextTick(uncork, socket);
      return ok;
    }
    return this.isHead || socket.write(chunk);
  }

  drained(): Promise<boolean> {
    const socket = this.conn.socket;
    if (socket.destroyed) return Promise.resolve(false);
    if (!socket.writableNeedDrain) return Promise.resolve(true);
    return new Promise((resolve) => {
      const drain = () => {
        socket.off('close', close);
        resolve(true);
      };
      const close = () => {
        socket.off('drain', drain);
        resolve(false);
      };
      socket.once('drain', drain);
      socket.once('close', close);
    });
  }

  end(chunk?: Buffer | string): void {
    if (this.finished) return;
    const socket = this.conn.socket;
    if (!socket.destroyed) {
      const body =
        chunk === undefined || this.isHead ? undefined : typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      if (!this.headersSent) {
        if (body !== undefined && !this.hasLength) {
          this.head += `content-length: ${body.length}\r\n`;
          this.hasLength = true;
        }
        const head = this.flushHead(false);
        if (body !== undefined && body.length > 0) {
          socket.cork();
          socket.write(head, 'latin1');
          socket.write(body);
          socket.uncork();
        } else socket.write(head, 'latin1');
      } else if (body !== undefined && body.length > 0) socket.write(body);
    }
    this.done();
  }

  sendHit(hit: PreparedHit, age: number): void {
    const socket = this.conn.socket;
    this.headersSent = true;
    this.closeAfter = !this.keepAlive;
    if (!socket.destroyed) {
      const wire = this.keepAlive && !this.http10 && !this.isHead ? hit.wireFor(age) : null;
      if (wire !== null) socket.write(wire);
      else {
        const conn = this.keepAlive ? (this.http10 ? 'connection: keep-alive\r\n' : '') : 'connection: close\r\n';
        const h = `HTTP/1.1 200 OK\r\n${hit.head}age: ${age}\r\n${dateHeader()}${conn}\r\n`;
        const body = hit.body;
        if (!this.isHead && body.length > 0) {
          socket.cork();
          socket.write(h, 'latin1');
          socket.write(body);
          socket.uncork();
        } else socket.write(h, 'latin1');
      }
    }
    this.done();
  }

  private done(): void {
    this.finished = true;
    this.emitClose();
    this.conn.finished(this.closeAfter);
  }

  emitClose(): void {
    const listeners = this.listeners;
    if (listeners === null) return;
    this.listeners = null;
    for (const l of listeners) l();
  }

  destroy(): void {
    this.conn.socket.destroy();
  }

  once(_event: 'close', listener: () => void): void {
    if (this.finished || this.conn.socket.destroyed) return void queueMicrotask(listener);
    (this.listeners ??= []).push(listener);
  }
}

function uncork(socket: Socket): void {
  socket.uncork();
}

export type EdgeHandler = (req: EdgeRequest, res: EdgeResponse) => void | Promise<void>;

/** Case-insensitive match of `buf[start, end)` against a lower-case ASCII name. */
function sameName(buf: Buffer, start: number, end: number, name: string): boolean {
  for (let i = start; i < end; i++) if ((buf[i]! | 0x20) !== name.charCodeAt(i - start)) return false;
  return true;
}

/** The lower-case name of the header at `buf[start, end)` (already checked to be a token). */
function headerName(buf: Buffer, start: number, end: number): string {
  const candidates = KNOWN_BY_LENGTH[end - start];
  if (candidates !== undefined) for (const name of candidates) if (sameName(buf, start, end, name)) return name;
  return buf.toString('latin1', start, end).toLowerCase();
}

/** The method of the request line, interned for the usual ones. */
function methodName(buf: Buffer, start: number, end: number): string {
  const n = end - start;
  if (n === 3 && buf[start] === 71 && buf[start + 1] === 69 && buf[start + 2] === 84) return 'GET';
  if (n === 4 && buf[start] === 72 && buf[start + 1] === 69 && buf[start + 2] === 65 && buf[start + 3] === 68)
    return 'HEAD';
  return buf.toString('latin1', start, end);
}

const HTTP_1_ = [72, 84, 84, 80, 47, 49, 46]; // "HTTP/1."

/**
 * Where the head starting at `from` ends (its CRLFCRLF), looking no further than MAX_HEAD bytes;
 * -1 when not there yet (or too far: the caller sees the length). A loop in JS: cheaper than a call
 * into Buffer.indexOf for heads of a few dozen bytes.
 */
function headEnd(buf: Buffer, from: number): number {
  const last = Math.min(buf.length - 3, from + MAX_HEAD + 1);
  for (let i = from; i < last; i++)
    if (buf[i] === 13 && buf[i + 1] === 10 && buf[i + 2] === 13 && buf[i + 3] === 10) return i;
  return -1;
}

class Connection {
  private pending: Buffer | null = null;
  private discard = 0;
  private current: Response | null = null;
  private parsing = false;
  /** Read since the last idle sweep; bytesWritten seen then; for how long nothing moved. */
  private active = true;
  private lastWritten = 0;
  private idleFor = 0;
  /**
   * When the request now arriving began (0: none), and when its head began (0: head complete):
   * while we wait on the client for them, the sweep answers 408 past the request and headers
   * timeouts, so a client trickling a head or a body cannot hold a connection for ever.
   */
  private requestSince = 0;
  private headSince = 0;
  readonly socket: Socket;
  private readonly peer: EdgePeer;
  private readonly handler: EdgeHandler;
  private readonly onError: (error: unknown, res: EdgeResponse) => void;
  constructor(socket: Socket, handler: EdgeHandler, onError: (error: unknown, res: EdgeResponse) => void) {
    this.socket = socket;
    this.handler = handler;
    this.onError = onError;
    this.peer = { remoteAddress: socket.remoteAddress, memo: undefined };
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.data(chunk));
    socket.on('error', () => {});
    socket.on('close', () => this.current?.emitClose());
  }

  private data(chunk: Buffer): void {
    this.active = true;
    this.pending = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    if (this.current === null) this.parse();
    else if (this.pending.length > 4 * MAX_HEAD) this.socket.pause(); // pipelined flood: wait for the answers
  }

  /**
   * Called by the server's sweep every `step` ms instead of a timer per socket (which node re-arms on
   * every read and write): a connection where nothing was read or written for `idleMs` is closed.
   */
  sweep(step: number, timeouts: EdgeServerTimeouts, now: number): void {
    if (
      this.current === null &&
      ((this.headSince !== 0 && now - this.headSince >= timeouts.headersMs) ||
        (this.requestSince !== 0 && now - this.requestSince >= timeouts.requestMs))
    ) {
      this.headSince = 0;
      this.requestSince = 0;
      this.discard = 0;
      this.reject(408);
      return;
    }
    const idleMs = timeouts.idleMs;
    const written = this.socket.bytesWritten;
    if (this.active || written !== this.lastWritten) {
      this.active = false;
      this.lastWritten = written;
      this.idleFor = 0;
      return;
    }
    this.idleFor += step;
    if (this.idleFor >= idleMs) this.socket.destroy();
  }

  finished(close: boolean): void {
    this.current = null;
    if (close) {
      this.socket.end();
      this.pending = null;
      return;
    }
    if (this.socket.isPaused()) this.socket.resume();
    if (this.pending !== null && !this.parsing) this.parse();
  }

  private reject(status: number): void {
    this.pending = null;
    const body = JSON.stringify({ message: STATUS_CODES[status] ?? 'Bad request' });
    this.socket.end(
      `${statusLine(status)}content-type: application/json\r\ncontent-length: ${body.length}\r\n${dateHeader()}connection: close\r\n\r\n${body}`,
      'latin1',
    );
    this.socket.removeAllListeners('data');
  }

  private parse(): void {
    this.parsing = true;
    let corked = false;
    batchNow = Date.now();
    try {
      // The answers to a pipelined batch leave together: cork once more than one request is waiting.
      while (this.parseOne()) {
        if (!corked && this.current === null && this.pending !== null) {
          corked = true;
          this.socket.cork();
        }
      }
    } finally {
      this.parsing = false;
      batchNow = 0;
      if (corked) this.socket.uncork();
    }
  }

  /** Parses and dispatches the next complete request; false when there is none (or the connection is done). */
  private parseOne(): boolean {
    if (this.current !== null || this.pending === null) return false;
    let buf = this.pending;
    if (this.discard > 0) {
      const n = Math.min(this.discard, buf.length);
      this.discard -= n;
      if (this.discard === 0) this.requestSince = 0;
      buf = buf.subarray(n);
      if (buf.length === 0) {
        this.pending = null;
        return false;
      }
    }
    // Tolerate empty lines before a request line (RFC 9112 §2.2).
    let start = 0;
    while (start + 1 < buf.length && buf[start] === 13 && buf[start + 1] === 10) start += 2;
    const end = headEnd(buf, start);
    if (end < 0) {
      this.pending = buf.subarray(start);
      if (this.pending.length > MAX_HEAD) this.reject(431);
      else if (this.headSince === 0) this.headSince = this.requestSince = Date.now();
      return false;
    }
    this.headSince = 0;
    this.pending = end + 4 < buf.length ? buf.subarray(end + 4) : null;

    // Request line: METHOD SP request-target SP HTTP/1.x, scanned byte by byte.
    let i = start;
    while (i < end && buf[i]! >= 65 && buf[i]! <= 90) i++;
    if (i === start || i - start > 20 || buf[i] !== 32) return this.fail(400);
    const method = methodName(buf, start, i);
    const targetStart = ++i;
    while (i < end && NOT_TARGET[buf[i]!] === 0) i++;
    if (i === targetStart || buf[i] !== 32 || i + 9 > end) return this.fail(400);
    const url = buf.toString('latin1', targetStart, i);
    i++;
    for (let k = 0; k < 7; k++) if (buf[i + k] !== HTTP_1_[k]) return this.fail(400);
    const minor = buf[i + 7];
    if (minor !== 48 && minor !== 49) return this.fail(400);
    const http10 = minor === 48;
    i += 8;
    if (i !== end && (buf[i] !== 13 || buf[i + 1] !== 10)) return this.fail(400);

    // Header lines up to `end`: token name, ':', optional whitespace, value without controls.
    const headers = Object.create(HEADERS_PROTO) as Record<string, string | undefined>;
    while (i < end) {
      i += 2; // past the CRLF ending the previous line
      const nameStart = i;
      while (i < end && TCHAR[buf[i]!] === 1) i++;
      if (i === nameStart || buf[i] !== 58 || i >= end) return this.fail(400);
      const name = headerName(buf, nameStart, i);
      i++;
      while (i < end && (buf[i] === 32 || buf[i] === 9)) i++;
      const valueStart = i;
      while (i < end && buf[i] !== 13) {
        if (NOT_VALUE[buf[i]!] === 1) return this.fail(400);
        i++;
      }
      if (i < end && buf[i + 1] !== 10) return this.fail(400); // a bare CR
      let valueEnd = i;
      while (valueEnd > valueStart && (buf[valueEnd - 1] === 32 || buf[valueEnd - 1] === 9)) valueEnd--;
      const value = valueEnd === valueStart ? '' : buf.toString('latin1', valueStart, valueEnd);
      const old = headers[name];
      if (old === undefined) headers[name] = value;
      else if (name === 'host' || name === 'content-length') return this.fail(400);
      else headers[name] = `${old}, ${value}`;
    }
    if (!http10 && headers.host === undefined) return this.fail(400);
    if (headers['transfer-encoding'] !== undefined) return this.fail(400);
    const length = headers['content-length'];
    if (length !== undefined) {
      if (!/^\d{1,15}$/.test(length)) return this.fail(400);
      if (Number(length) > MAX_DISCARDED_BODY) return this.fail(413);
      this.discard = Number(length);
    }
    if (this.discard === 0) this.requestSince = 0;
    else if (this.requestSince === 0) this.requestSince = Date.now();
    const connection = headers.connection;
    const keepAlive =
      connection === undefined
        ? !http10
        : http10
          ? connection.toLowerCase().includes('keep-alive')
          : !connection.toLowerCase().includes('close');
    const res = new Response(this, keepAlive, method === 'HEAD', http10);
    this.current = res;
    const req: EdgeRequest = { method, url, headers, socket: this.peer, at: batchNow };
    try {
      const out = this.handler(req, res);
      if (out !== undefined) out.catch((error: unknown) => this.onError(error, res));
    } catch (error) {
      this.onError(error, res);
    }
    return true;
  }

  private fail(status: number): false {
    this.reject(status);
    return false;
  }
}

export interface EdgeHttpServer {
  server: Server;
  close(): Promise<void>;
}

/** Milliseconds (config: EDGE_HEADERS_TIMEOUT_MS, EDGE_REQUEST_TIMEOUT_MS, EDGE_IDLE_TIMEOUT_MS). */
export interface EdgeServerTimeouts {
  /** From a request's first byte until its head is complete: 408 and close after. */
  headersMs: number;
  /** From a request's first byte until its (discarded) body is complete: 408 and close after. */
  requestMs: number;
  /** Nothing read or written for this long (kept-alive connections included): closed. */
  idleMs: number;
}

const DEFAULT_TIMEOUTS: EdgeServerTimeouts = { headersMs: 20_000, requestMs: 60_000, idleMs: 65_000 };

/** Starts listening; `onError` answers (or destroys) a request whose handler threw. */
export function createEdgeHttpServer(
  handler: EdgeHandler,
  onError: (error: unknown, res: EdgeResponse) => void,
  timeoutsIn: Partial<EdgeServerTimeouts> = {},
): EdgeHttpServer {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...timeoutsIn };
  const connections = new Map<Socket, Connection>();
  // One sweep for every connection instead of a timer per socket (node re-arms those on every read and write).
  const step = Math.max(50, Math.min(5_000, Math.floor(Math.min(timeouts.idleMs, timeouts.headersMs) / 4)));
  const sweep = setInterval(() => {
    dateHeader(); // a new second drops the prebuilt hit answers even when no request comes
    const now = Date.now();
    for (const c of connections.values()) c.sweep(step, timeouts, now);
  }, step);
  sweep.unref();
  const server = createServer({ noDelay: true }, (socket) => {
    connections.set(socket, new Connection(socket, handler, onError));
    socket.once('close', () => connections.delete(socket));
  });
  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(sweep);
        server.close(() => resolve());
        for (const s of connections.keys()) s.destroy();
      }),
  };
}
