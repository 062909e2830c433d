// Reference YAML 1.2 decoder for skillwire's differential tests.
//
// Reads a JSON array of YAML texts on stdin and writes a JSON array with one result per text (with
// `--serve` after the package path: one array per line, answered line by line, until stdin closes):
//   {"ok": value}                      what `yaml.parse(text)` (npm yaml v2, default options) returns
//   {"ok": value, "nonFinite": true}   same, but the value holds Infinity/NaN (JSON turns them into null)
//   {"error": message}                 yaml.parse threw (syntax error, duplicate key, alias bomb, ...)
// A -0 (which JSON would print as 0) is written as {"__negative_zero__": true} so the sign survives.
// Default options already reject duplicate keys (uniqueKeys: true) and bound aliases (maxAliasCount: 100).
// Warnings (unresolved tags, collection keys) are silenced; they do not change the value.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const require = createRequire(import.meta.url);
const yamlPath = process.argv[2];
const YAML = require(yamlPath);

function hasNonFinite(value) {
  if (typeof value === "number") return !Number.isFinite(value);
  if (Array.isArray(value)) return value.some(hasNonFinite);
  if (value !== null && typeof value === "object") return Object.values(value).some(hasNonFinite);
  return false;
}

function parseOne(text) {
  try {
    const value = YAML.parse(text, { logLevel: "error" });
    const result = { ok: value === undefined ? null : value };
    if (hasNonFinite(value)) result.nonFinite = true;
    // Dates, Buffers, Maps and Sets (YAML 1.1 tags) go through JSON.stringify like any JS consumer would.
    return JSON.parse(JSON.stringify(result, (_key, v) => (Object.is(v, -0) ? { __negative_zero__: true } : v)));
  } catch (error) {
    return { error: String(error && error.message ? error.message : error) };
  }
}

if (process.argv[3] === "--serve") {
  // Persistent mode (for property tests): one JSON array of texts per input line, one JSON array of
  // results per output line, until stdin closes.
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    process.stdout.write(JSON.stringify(JSON.parse(line).map(parseOne)) + "\n");
  }
} else {
  process.stdout.write(JSON.stringify(JSON.parse(readFileSync(0, "utf8")).map(parseOne)));
}
