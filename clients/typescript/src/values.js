// Plain JSON <-> TCC tagged values (the host's wire form of program values).

/** @param {unknown} value @returns {object} */
export function toTagged(value) {
  if (value === null || value === undefined) return { t: "null" };
  if (typeof value === "boolean") return { t: "bool", v: value };
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError("non-finite numbers have no plain JSON form");
    return { t: "number", v: value };
  }
  if (typeof value === "string") return { t: "string", v: value };
  if (Array.isArray(value)) return { t: "array", v: value.map(toTagged) };
  if (typeof value === "object") {
    return { t: "object", v: Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toTagged(v)])) };
  }
  throw new TypeError(`not a plain JSON value: ${typeof value}`);
}

/** @param {any} tagged @returns {unknown} */
export function toPlain(tagged) {
  if (!tagged || typeof tagged !== "object") return null;
  const { t, v } = tagged;
  if (t === "bool" || t === "number" || t === "string") return v;
  if (t === "array" && Array.isArray(v)) return v.map(toPlain);
  if (t === "object" && v && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toPlain(x)]));
  }
  return null;
}
