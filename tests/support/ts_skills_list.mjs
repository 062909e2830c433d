// Lists every skill of a server with the TypeScript SDK 2.4.0's SkillsClient on its defaults
// (Client defaults: listMaxPages 64; SkillsClient defaults: throws on any invalid entry), and prints
// one JSON line: {"count": N, "uris": [...]} or {"error": "..."}.
// Usage: node ts_skills_list.mjs TOOLS_NODE_MODULES URL
import { pathToFileURL } from "node:url";
import path from "node:path";

const [modules, url] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(path.join(modules, p)).href);
const { Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client/dist/index.mjs");
const { SkillsClient } = await load("@modelcontextprotocol/client/dist/ext/skills/index.mjs");

const client = new Client({ name: "skillwire-interop-ts", version: "0" });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const listing = await new SkillsClient(client).list();
  process.stdout.write(JSON.stringify({ count: listing.skills.length, uris: listing.skills.map((s) => s.uri) }) + "\n");
} catch (error) {
  process.stdout.write(JSON.stringify({ error: String(error && error.message ? error.message : error) }) + "\n");
} finally {
  await client.close().catch(() => {});
}
