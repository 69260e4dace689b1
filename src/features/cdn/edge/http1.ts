import { createServer, type Server, type Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';

/**
 * The edge's own HTTP/1.1 server: a small, strict request parser on `node:net` and responses written
 * as one header string plus the body (one `writev`). The edge answers only GET, HEAD and OPTIONS, so
 * there are no request bodies to stream: a `Content-Length` body is read and discarded, and
 * `Transfer-Encoding` or any malformed head gets 400 and the connection is closed (no request
 * smuggling). Requests on one connection are answered strictly in order (pipelining works).
 * It exists because node:http's per-request objects cost about half the throughput of a cache hit.
 */

export interface EdgeRequest {
  method: string;
  url: string;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string | undefined>;
  socket: { remoteAddress?: string | undefined };
}

export type HeaderInput = Record<string, string | number> | readonly string[];

export interface EdgeResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers?: HeaderInput): this;
  write(chunk: Buffer): boolean;
  end(chunk?: Buffer | string): void;
  /** Cache-hit fast path: `head` is the block of header lines (each ending in CRLF) without Date and Connection. */
  sendHit(head: string, body: Buffer | null): void;
  destroy(): void;
  once(event: 'close', listener: () => void): void;
}

const MAX_HEAD = 16 * 1024;
const MAX_DISCARDED_BODY = 1024 * 1024;
const CRLFCRLF = Buffer.from('\r\n\r\n');
const REQUEST_LINE = /^([A-Z]{1,20}) (\S+) HTTP\/1\.([01])$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const STATUS_LINES: string[] = [];
for (const [code, text] of Object.entries(STATUS_CODES)) STATUS_LINES[Number(code)] = `HTTP/1.1 ${code} ${text}\r\n`;
const statusLine = (status: number) => STATUS_LINES[status] ?? `HTTP/1.1 ${status} Unknown\r\n`;

let dateSecond = -1;
let dateLine = '';
/** `date: …\r\n`, rebuilt at most once a second. */
function dateHeader(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateLine = `date: ${new Date(second * 1000).toUTCString()}\r\n`;
  }
  return dateLine;
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

  end(chunk?: Buffer | string): void {
    if (this.finished) return;
    const socket = this.conn.socket;
    if (!socket.destroyed) {
      const body = chunk === undefined || this.isHead ? undefined : typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
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

  sendHit(head: string, body: Buffer | null): void {
    const socket = this.conn.socket;
    this.headersSent = true;
    if (!socket.destroyed) {
      const conn = this.keepAlive ? (this.http10 ? 'connection: keep-alive\r\n' : '') : 'connection: close\r\n';
      this.closeAfter = !this.keepAlive;
      const h = `HTTP/1.1 200 OK\r\n${head}${dateHeader()}${conn}\r\n`;
      if (body !== null && !this.isHead && body.length > 0) {
        socket.cork();
        socket.write(h, 'latin1');
        socket.write(body);
        socket.uncork();
      } else socket.write(h, 'latin1');
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

class Connection {
  private pending: Buffer | null = null;
  private discard = 0;
  private current: Response | null = null;
  private parsing = false;
  readonly socket: Socket;
  private readonly handler: EdgeHandler;
  private readonly onError: (error: unknown, res: EdgeResponse) => void;
  constructor(socket: Socket, handler: EdgeHandler, onError: (error: unknown, res: EdgeResponse) => void) {
    this.socket = socket;
    this.handler = handler;
    this.onError = onError;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.data(chunk));
    socket.on('error', () => {});
    socket.on('close', () => this.current?.emitClose());
  }

  private data(chunk: Buffer): void {
    this.pending = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    if (this.current === null) this.parse();
    else if (this.pending.length > 4 * MAX_HEAD) this.socket.pause(); // pipelined flood: wait for the answers
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
    this.socket.end(`${statusLine(status)}content-type: application/json\r\ncontent-length: ${body.length}\r\n${dateHeader()}connection: close\r\n\r\n${body}`, 'latin1');
    this.socket.removeAllListeners('data');
  }

  private parse(): void {
    this.parsing = true;
    try {
      this.parseLoop();
    } finally {
      this.parsing = false;
    }
  }

  private parseLoop(): void {
    while (this.current === null && this.pending !== null) {
      let buf = this.pending;
      if (this.discard > 0) {
        const n = Math.min(this.discard, buf.length);
        this.discard -= n;
        buf = buf.subarray(n);
        if (buf.length === 0) {
          this.pending = null;
          return;
        }
      }
      // Tolerate empty lines before a request line (RFC 9112 §2.2).
      let start = 0;
      while (start + 1 < buf.length && buf[start] === 13 && buf[start + 1] === 10) start += 2;
      const end = buf.indexOf(CRLFCRLF, start);
      if (end < 0) {
        this.pending = buf.subarray(start);
        if (this.pending.length > MAX_HEAD) this.reject(431);
        return;
      }
      if (end - start > MAX_HEAD) return this.reject(431);
      const head = buf.toString('latin1', start, end);
      const rest = buf.subarray(end + 4);
      this.pending = rest.length > 0 ? rest : null;
      const lines = head.split('\r\n');
      const m = REQUEST_LINE.exec(lines[0]!);
      if (!m) return this.reject(400);
      const headers: Record<string, string | undefined> = {};
      for (let i = 1; i < lines.length; i++) {
        const line = lines[i]!;
        const colon = line.indexOf(':');
        if (colon <= 0) return this.reject(400);
        const name = line.slice(0, colon).toLowerCase();
        if (!TOKEN.test(name)) return this.reject(400);
        const value = line.slice(colon + 1).trim();
        const old = headers[name];
        if (old === undefined) headers[name] = value;
        else if (name === 'host' || name === 'content-length') return this.reject(400);
        else headers[name] = `${old}, ${value}`;
      }
      const http10 = m[3] === '0';
      if (!http10 && headers.host === undefined) return this.reject(400);
      if (headers['transfer-encoding'] !== undefined) return this.reject(400);
      const length = headers['content-length'];
      if (length !== undefined) {
        if (!/^\d{1,15}$/.test(length)) return this.reject(400);
        if (Number(length) > MAX_DISCARDED_BODY) return this.reject(413);
        this.discard = Number(length);
      }
      const connection = headers.connection?.toLowerCase();
      const keepAlive = http10 ? connection !== undefined && connection.includes('keep-alive') : connection === undefined || !connection.includes('close');
      const method = m[1]!;
      const res = new Response(this, keepAlive, method === 'HEAD', http10);
      this.current = res;
      const req: EdgeRequest = { method, url: m[2]!, headers, socket: this.socket };
      try {
        const out = this.handler(req, res);
        if (out !== undefined) out.catch((error: unknown) => this.onError(error, res));
      } catch (error) {
        this.onError(error, res);
      }
    }
  }
}

export interface EdgeHttpServer {
  server: Server;
  close(): Promise<void>;
}

/** Starts listening; `onError` answers (or destroys) a request whose handler threw. */
export function createEdgeHttpServer(handler: EdgeHandler, onError: (error: unknown, res: EdgeResponse) => void, idleMs = 65_000): EdgeHttpServer {
  const sockets = new Set<Socket>();
  const server = createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.setTimeout(idleMs, () => socket.destroy());
    socket.once('close', () => sockets.delete(socket));
    new Connection(socket, handler, onError);
  });
  return {
    server,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    }),
  };
}
