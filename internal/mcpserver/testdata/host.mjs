// A minimal MCP host: the official TypeScript SDK's client over
// Streamable HTTP with a bearer token. One operation a run, printed as
// JSON on stdout:
//
//   node host.mjs SDK_DIR URL TOKEN list
//   node host.mjs SDK_DIR URL TOKEN call NAME ARGS_JSON
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [sdkDir, url, token, op, name, args] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(sdkDir, "dist", "esm", p)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const client = new Client({ name: "node-host", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
await client.connect(transport);
let out;
if (op === "list") {
  const res = await client.listTools();
  out = { protocol: transport.protocolVersion ?? null, tools: res.tools.map((t) => t.name) };
} else if (op === "call") {
  out = await client.callTool({ name, arguments: JSON.parse(args ?? "{}") });
} else {
  throw new Error(`unknown operation ${op}`);
}
process.stdout.write(JSON.stringify(out) + "\n");
await client.close();
