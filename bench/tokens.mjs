// Real token counts for bench/tokens.sh: for each file given, the cl100k_base
// and o200k_base counts of js-tiktoken (OpenAI's BPE vocabularies, embedded in
// the package), tab-separated with the path.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(process.env.TOKENS_NODE_DIR ? process.env.TOKENS_NODE_DIR + "/" : import.meta.url);
const { getEncoding } = require("js-tiktoken");
const encodings = ["cl100k_base", "o200k_base"].map((name) => getEncoding(name));
for (const path of process.argv.slice(2)) {
  const text = readFileSync(path, "utf8");
  const counts = encodings.map((e) => e.encode(text).length);
  console.log([...counts, path].join("\t"));
}
