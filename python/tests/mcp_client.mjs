// The official MCP client (@modelcontextprotocol/sdk) against `profeed mcp`:
// initialize, tools/list, tools/call of each tool, with progress. Prints one
// JSON object of what it saw; test_mcp.py judges it.
//   node mcp_client.mjs PROFEED_COMMAND ENDPOINT RAW_CSV
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readFileSync } from "node:fs";

const [command, endpoint, rawCsv] = process.argv.slice(2);
// The whole environment: a sanitized build's runtimes ride in LD_PRELOAD.
const transport = new StdioClientTransport({
  command, args: ["mcp", "--endpoint", endpoint], stderr: "inherit", env: { ...process.env },
});
const client = new Client({ name: "profeed-test", version: "1.0.0" });
const seen = {};
const call = async (name, args, extra = {}) => {
  try {
    return await client.callTool({ name, arguments: args }, undefined, { timeout: 60000, ...extra });
  } catch (e) {
    return { thrown: String(e) };
  }
};
await client.connect(transport);
seen.server = client.getServerVersion();
seen.capabilities = client.getServerCapabilities();
seen.tools = (await client.listTools()).tools.map((t) => ({ name: t.name, schema: t.inputSchema }));

seen.analyze_files = await call("analyze_profile", { files: [rawCsv] });
seen.analyze_inline = await call("analyze_profile", {
  content: [{ name: "ncu_report.csv", pass_key: "ncu.000", text: readFileSync(rawCsv, "utf8") }],
  format: "json",
});
seen.analyze_bad = await call("analyze_profile", { content: [{ name: "ncu_report.csv", text: "x" }], profiler: "rocprof" });
seen.analyze_missing = await call("analyze_profile", { files: ["/nonexistent/raw.csv"] });
const progress = [];
seen.submit = await call("submit_job", { command: ["kernels"], language: "cuda", wait_s: 30 },
  { onprogress: (p) => progress.push(p) });
seen.progress = progress;
seen.status = await call("farm_status", {});
seen.status_dead = await call("farm_status", { endpoint: "ipc:///nonexistent/profeed-agents", timeout_s: 0.5 });
seen.unknown_tool = await call("no_such_tool", {});
await client.close();
process.stdout.write(JSON.stringify(seen) + "\n");
