// JSON-lines server: the real tokenizer of a folder (transformers.js), for the Python stand-in.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
// transformers.js from $TRANSFORMERS_JS (a folder where `npm install --ignore-scripts
// @huggingface/transformers@4.3.1` was run), wherever this script is.
const entry = createRequire(process.env.TRANSFORMERS_JS + '/').resolve('@huggingface/transformers');
const { AutoTokenizer, env } = await import(pathToFileURL(entry).href);
import path from 'node:path';
import readline from 'node:readline';
const dir = path.resolve(process.argv[2]);
env.allowRemoteModels = false;
env.localModelPath = path.dirname(dir) + '/';
const tok = await AutoTokenizer.from_pretrained(path.basename(dir));
const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  const q = JSON.parse(line);
  let r;
  if (q.op === 'encode') r = tok.encode(q.text, { add_special_tokens: q.add_special_tokens });
  else if (q.op === 'decode') r = tok.decode(q.ids, { skip_special_tokens: false });
  process.stdout.write(JSON.stringify(r) + '\n');
}
