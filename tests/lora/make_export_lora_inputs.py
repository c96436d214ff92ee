# Inputs for check_llama_export_lora.sh: a small llama-architecture base GGUF (F16, F32, BF16
# and Q8_0 weights, a token_embd, a weight of 66 columns, which ggml does not tile) and GGUF LoRA
# adapters of ranks 4 to 128 (every summation path of ck/kernels/lora.hpp), F32 and F16, random
# N(0, 0.02) factors. The standard library only (no numpy): the GGUF layout written by hand.
#
#   python3 tests/lora/make_export_lora_inputs.py DIR
import os
import random
import struct
import sys

def f16(x):
    return struct.unpack('<H', struct.pack('<e', x))[0]

def bf16(x):
    n = struct.unpack('<I', struct.pack('<f', x))[0]
    n = (n + 0x7fff + ((n >> 16) & 1)) >> 16
    return n & 0xffff

def gguf_string(s):
    b = s.encode()
    return struct.pack('<Q', len(b)) + b

def write(path, kv, tensors):
    # kv: list of (key, type, value) with type 'str'|'u32'|'f32'; tensors: (name, ggml_type, ne, bytes)
    out = bytearray(b'GGUF' + struct.pack('<I', 3) + struct.pack('<Q', len(tensors)) + struct.pack('<Q', len(kv)))
    for k, t, v in kv:
        out += gguf_string(k)
        if t == 'str': out += struct.pack('<I', 8) + gguf_string(v)
        elif t == 'u32': out += struct.pack('<I', 4) + struct.pack('<I', v)
        elif t == 'f32': out += struct.pack('<I', 6) + struct.pack('<f', v)
    offset = 0
    datas = []
    for name, typ, ne, data in tensors:
        out += gguf_string(name) + struct.pack('<I', len(ne)) + b''.join(struct.pack('<q', d) for d in ne)
        out += struct.pack('<I', typ) + struct.pack('<Q', offset)
        datas.append(data)
        offset += (len(data) + 31) // 32 * 32
    out += b'\0' * ((-len(out)) % 32)
    for d in datas:
        out += d + b'\0' * ((-len(d)) % 32)
    open(path, 'wb').write(out)

F32, F16, Q8_0, BF16 = 0, 1, 8, 30
rng = random.Random(7)

def values(n, spread):
    return [rng.gauss(0, spread) for _ in range(n)]

def encode(typ, vals):
    if typ == F32: return b''.join(struct.pack('<f', v) for v in vals)
    if typ == F16: return b''.join(struct.pack('<H', f16(v)) for v in vals)
    if typ == BF16: return b''.join(struct.pack('<H', bf16(v)) for v in vals)
    if typ == Q8_0:
        out = b''
        for i in range(0, len(vals), 32):
            out += struct.pack('<H', f16(0.002)) + bytes(rng.randrange(256) for _ in range(32))
        return out

base = [("blk.0.attn_q.weight", F16, [64, 48]),
        ("blk.0.attn_k.weight", F32, [64, 32]),
        ("blk.0.ffn_up.weight", F16, [66, 40]),
        ("blk.0.ffn_down.weight", BF16, [40, 64]),
        ("blk.0.attn_v.weight", Q8_0, [64, 32]),
        ("token_embd.weight", F16, [64, 20]),
        ("output_norm.weight", F32, [64])]
d = sys.argv[1]
write(os.path.join(d, 'base.gguf'),
      [('general.architecture', 'str', 'llama'), ('general.name', 'str', 'x'), ('general.file_type', 'u32', 1)],
      [(n, t, ne, encode(t, values(ne[0] * (ne[1] if len(ne) > 1 else 1), 0.05))) for n, t, ne in base])
for r in [4, 6, 8, 12, 16, 20, 32, 48, 64, 72, 100, 128]:
    for typ, tag in [(F32, 'f32'), (F16, 'f16')]:
        ts = []
        for n, t, ne in base:
            if len(ne) < 2: continue
            if n == 'token_embd.weight':
                a_ne, b_ne = [r, ne[1]], [r, ne[0]]
            else:
                a_ne, b_ne = [ne[0], r], [r, ne[1]]
            ts.append((n + '.lora_a', typ, a_ne, encode(typ, values(a_ne[0] * a_ne[1], 0.02))))
            ts.append((n + '.lora_b', typ, b_ne, encode(typ, values(b_ne[0] * b_ne[1], 0.02))))
        write(os.path.join(d, 'r%d.%s.gguf' % (r, tag)),
              [('general.architecture', 'str', 'llama'), ('general.type', 'str', 'adapter'),
               ('adapter.type', 'str', 'lora'), ('adapter.lora.alpha', 'f32', float(2 * r))], ts)
