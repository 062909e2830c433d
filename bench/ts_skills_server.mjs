// The TypeScript SDK 2.4.0 as a benchmark peer: its own filesystem loader (`loadSkills` from
// `@modelcontextprotocol/server/ext/skills/node`) attached to an `McpServer`, served over Streamable HTTP
// on 127.0.0.1 the way its docs mount it on plain node:http (`createMcpHandler` + `toNodeHandler` from
// `@modelcontextprotocol/node`), with Host/Origin validation for localhost in front, as skillwire has.
//
// Usage: node ts_skills_server.mjs NODE_MODULES ROOT PORT PAGE_SIZE (PORT 0: the kernel picks one)
// Prints "listening on http://127.0.0.1:PORT/mcp", with the port bound, once the catalog is loaded and the
// port accepts.
import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modules, root, port, pageSize] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(path.join(modules, p)).href);
const { McpServer, createMcpHandler } = await load("@modelcontextprotocol/server/dist/index.mjs");
const { loadSkills } = await load("@modelcontextprotocol/server/dist/ext/skills/node.mjs");
const { toNodeHandler, localhostHostValidation } = await load("@modelcontextprotocol/node/dist/index.mjs");

// The catalog is loaded once (scanned, validated, hashed); each request gets a fresh McpServer with it attached.
const skills = await loadSkills(root, { pageSize: Number(pageSize) });
const handler = createMcpHandler(() => {
  const mcp = new McpServer({ name: "typescript-sdk-skills-peer", version: "2.4.0" });
  skills.attach(mcp);
  return mcp;
});
const node = toNodeHandler(handler);
const hostOk = localhostHostValidation();

const server = http
  .createServer((req, res) => {
    if (!hostOk(req, res)) return;
    if (new URL(req.url ?? "/", "http://127.0.0.1").pathname !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    node(req, res);
  })
  .listen(Number(port), "127.0.0.1", () => {
    process.stdout.write(`listening on http://127.0.0.1:${server.address().port}/mcp\n`);
  });
