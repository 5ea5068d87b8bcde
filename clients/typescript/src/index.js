// Client, effect worker and test helper (@irkit/tcc/testing) for irkit's
// TCC durable host.
export { ApiError, TransportError } from "./http.js";
export { Client, ExecutionFailed, ENDED, LONG_POLL_MS } from "./client.js";
export { Worker, patternMatches } from "./worker.js";
export { toPlain, toTagged } from "./values.js";
