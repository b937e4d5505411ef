// Encodes a list of strings with an independent tokenizer implementation installed by
// scripts/install_peers.sh, for tests/test_tokenizer_peers.cpp to compare ids against.
//   node encode_with_peer.mjs PEERS_DIR gpt-3-encoder STRINGS.json OUT.json
//   node encode_with_peer.mjs PEERS_DIR tokenizers TOKENIZER.json STRINGS.json OUT.json [add-special]
// STRINGS.json is a JSON list of strings; OUT.json receives a list of id lists, one per string.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [peersDir, peer, ...rest] = process.argv.slice(2);
const modules = join(peersDir, "node_modules");
let encode;
let stringsPath, outPath;
if (peer === "gpt-3-encoder") {
  [stringsPath, outPath] = rest;
  const { encode: gpt2Encode } = createRequire(join(modules, "x.js"))("gpt-3-encoder");
  encode = gpt2Encode;
} else if (peer === "tokenizers") {
  const [tokenizerPath] = rest;
  [, stringsPath, outPath] = rest;
  const addSpecial = rest[3] === "add-special";
  const { Tokenizer } = await import(pathToFileURL(join(modules, "@huggingface/tokenizers/dist/tokenizers.mjs")).href);
  const tokenizer = new Tokenizer(JSON.parse(readFileSync(tokenizerPath, "utf8")), {});
  encode = (text) => tokenizer.encode(text, { add_special_tokens: addSpecial }).ids;
} else {
  console.error(`encode_with_peer: unknown peer '${peer}'`);
  process.exit(2);
}
const strings = JSON.parse(readFileSync(stringsPath, "utf8"));
writeFileSync(outPath, JSON.stringify(strings.map((s) => Array.from(encode(s)))));
