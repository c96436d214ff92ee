// Encodes llama.cpp's check text (get_vocab_base_pre's chktxt) with transformers.js and prints
// the sha256 of str(ids) as the converter computes it.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
// transformers.js from $TRANSFORMERS_JS (a folder where `npm install --ignore-scripts
// @huggingface/transformers@4.3.1` was run), wherever this script is.
const entry = createRequire(process.env.TRANSFORMERS_JS + '/').resolve('@huggingface/transformers');
const { AutoTokenizer, env } = await import(pathToFileURL(entry).href);
import { createHash } from 'node:crypto';
import path from 'node:path';
const dir = path.resolve(process.argv[2]);
env.allowRemoteModels = false;
env.localModelPath = path.dirname(dir) + '/';
const tok = await AutoTokenizer.from_pretrained(path.basename(dir));
const chktxt = '\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n🚀 (normal) 😶\u200d🌫️ (multiple emojis concatenated) ✅ 🦙🦙 3 33 333 3333 33333 333333 3333333 33333333 3.3 3..3 3...3 កាន់តែពិសេសអាច😁 ?我想在apple工作1314151天～ ------======= нещо на Български \'\'\'\'\'\'```````""""......!!!!!!?????? I\'ve been \'told he\'s there, \'RE you sure? \'M not sure I\'ll make it, \'D you like some tea? We\'Ve a\'lL';
const ids = tok.encode(chktxt);
const text = '[' + ids.join(', ') + ']';
console.log(ids.length, createHash('sha256').update(text).digest('hex'));
