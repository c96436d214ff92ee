// Encodes texts with a tokenizer.json (and its tokenizer_config.json) through Hugging Face's
// JavaScript tokenizers (@huggingface/tokenizers, the library transformers.js 4 uses): an
// implementation independent of ckhost, for tests/hf/test_hf_export_tokenizer.cpp.
//   node encode_tokenizers_js.mjs TOKENIZERS_MJS FOLDER TEXTS_JSON
// TOKENIZERS_MJS: the package's dist/tokenizers.mjs (scripts/fetch-tokenizers.sh puts it in the
// cache); TEXTS_JSON: a file with a JSON list of strings. Prints a JSON list: each text's ids,
// special tokens added as the tokenizer's post-processor adds them.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [moduleFile, folder, textsFile] = process.argv.slice(2);
const { Tokenizer } = await import(pathToFileURL(path.resolve(moduleFile)).href);
const read = (name) => JSON.parse(readFileSync(path.join(folder, name), 'utf8'));
const tokenizer = new Tokenizer(read('tokenizer.json'), read('tokenizer_config.json'));
const texts = JSON.parse(readFileSync(textsFile, 'utf8'));
process.stdout.write(JSON.stringify(texts.map((text) => tokenizer.encode(text).ids)) + '\n');
