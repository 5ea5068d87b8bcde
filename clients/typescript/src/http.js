// The HTTP transport: JSON bodies with `Content-Type: application/json` on
// every POST, the bearer token, and the API's error body as ApiError.

/** The server refused a request. */
export class ApiError extends Error {
  /** @param {number} status @param {string} code @param {string} message @param {string} diagnostic */
  constructor(status, code, message, diagnostic) {
    super(`${code}: ${message} (HTTP ${status})`);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.diagnostic = diagnostic;
  }
}

/** The server could not be reached, or did not answer the API's JSON. */
export class TransportError extends Error {
  /** @param {string} message @param {unknown} [cause] */
  constructor(message, cause) {
    super(message, { cause });
    this.name = "TransportError";
  }
}

export class Transport {
  /** @param {string} url @param {string | undefined} token @param {string | undefined} [namespace] */
  constructor(url, token, namespace) {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new TypeError(`not an http(s) URL: ${url}`);
    this.base = url.replace(/\/+$/, "");
    this.token = token;
    this.namespace = namespace;
  }

  /**
   * One request; resolves to { status, body } for 2xx answers.
   * @param {string} method @param {string} path
   * @param {{ json?: unknown, raw?: Uint8Array | string, signal?: AbortSignal, traceparent?: string }} [opts]
   */
  async request(method, path, opts = {}) {
    /** @type {Record<string, string>} */
    const headers = { accept: "application/json" };
    let body = opts.raw;
    if (opts.json !== undefined) body = JSON.stringify(opts.json);
    if (method === "POST") {
      headers["content-type"] = "application/json";
      if (body === undefined) body = "";
    }
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (this.namespace) headers["tcc-namespace"] = this.namespace;
    if (opts.traceparent !== undefined) headers.traceparent = opts.traceparent;
    let resp;
    try {
      resp = await fetch(this.base + path, { method, headers, body, signal: opts.signal });
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      throw new TransportError(`${method} ${path}: ${e instanceof Error ? e.message : e}`, e);
    }
    let text;
    try {
      text = await resp.text();
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      throw new TransportError(`${method} ${path}: ${e instanceof Error ? e.message : e}`, e);
    }
    let doc = null;
    try {
      doc = text.trim() ? JSON.parse(text) : null;
    } catch {
      throw new TransportError(`${method} ${path}: HTTP ${resp.status} with a non-JSON body`);
    }
    if (resp.status >= 200 && resp.status < 300) return { status: resp.status, body: doc };
    const err = (doc && doc.error) || {};
    throw new ApiError(resp.status, String(err.code ?? "error"), String(err.message ?? ""), String(doc?.code ?? ""));
  }
}

/** A path segment, percent-encoded. @param {string} s */
export const quote = (s) => encodeURIComponent(s);
