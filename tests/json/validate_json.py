#!/usr/bin/python3
"""Runs every ckhost command with --json on real files, success and failure, and validates what
it prints on stdout against its schema in docs/schema/ (the contract of docs/json.md), with
Debian's python3-jsonschema. Also checks the exit code of each run, that a failure prints an
error document with that exit code, and that the validator really refuses a document that
breaks the contract (a number as a string, a missing field, an unknown error kind).

    validate_json.py CKHOST SCHEMA_DIR SAMPLE_MODEL

Exits 0 when everything matches; otherwise prints each mismatch and exits 1.
"""
import copy
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import jsonschema

ckhost = os.path.abspath(sys.argv[1])
schema_dir, sample = pathlib.Path(sys.argv[2]), os.path.abspath(sys.argv[3])
schemas = {p.name: json.loads(p.read_text()) for p in schema_dir.glob("*.schema.json")}
# The schemas refer to each other by $id ("error.schema.json" beside them): resolve from here.
store = {s["$id"]: s for s in schemas.values()}
for s in schemas.values():
    jsonschema.Draft202012Validator.check_schema(s)


def validator(name):
    s = schemas[name]
    return jsonschema.Draft202012Validator(s, resolver=jsonschema.RefResolver.from_schema(s, store=store))


failures = []
checked = []


def fail(what):
    failures.append(what)
    print("FAIL:", what, file=sys.stderr)


def run(command, args, want_exit, cwd, stdin=None):
    """Runs ckhost ARGS, checks the exit code and validates stdout against COMMAND's schema."""
    env = dict(os.environ, CKHOST_THREADS="2")
    env.pop("CKHOST_ISA", None)
    p = subprocess.run([ckhost] + args, cwd=cwd, capture_output=True, text=True, input=stdin,
                       env=env)
    label = "ckhost " + " ".join(args)
    if p.returncode != want_exit:
        fail(f"{label}: exit {p.returncode}, expected {want_exit}; stderr: {p.stderr}")
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        fail(f"{label}: stdout is not one JSON document ({e}): {p.stdout[:200]!r}")
        return None
    errors = sorted(validator(command + ".schema.json").iter_errors(doc), key=lambda e: e.path)
    for e in errors[:5]:
        fail(f"{label}: {'/'.join(map(str, e.absolute_path))}: {e.message[:300]}")
    if doc.get("ok") is False and "error" in doc and doc["error"]["exit_code"] != p.returncode:
        fail(f"{label}: error.exit_code {doc['error']['exit_code']} but exit {p.returncode}")
    if want_exit != 0 and doc.get("ok") is not False:
        fail(f"{label}: exit {want_exit} but \"ok\" is not false")
    checked.append(label)
    return doc


def refused(name, doc, change):
    """The validator must refuse DOC once CHANGE has been applied to a copy of it."""
    broken = copy.deepcopy(doc)
    change(broken)
    if validator(name).is_valid(broken):
        fail(f"{name}: a broken document was accepted ({change.__doc__})")


with tempfile.TemporaryDirectory(prefix="ckhost-json-") as tmp:
    t = pathlib.Path(tmp)
    (t / "garbage.bin").write_bytes(b"not a model at all\n" * 10)
    (t / "jobs.txt").write_text(
        f"gguf:headpack:bump {sample} out/a/\n"
        f"gguf:gguf {t}/missing.gguf out/b.gguf\n"
        f"gguf:nosuchstage:gguf {sample} out/c.gguf\n")
    (t / "ok-jobs.txt").write_text(f"gguf:gguf {sample} out/d.gguf\n"
                                   f"compare {sample} out/d.gguf --report out/d.html\n")

    # convert: success, dry run, up to date, and each kind of failure.
    main = run("convert", ["--pipeline", "gguf:headpack:bump", "-i", sample, "-o", "out/", "--json", "-q"], 0, t)
    run("convert", ["convert", "--pipeline", "gguf:repack[to=int8]:safetensors", sample, "r.safetensors", "--json"], 0, t)
    run("convert", ["--json", "convert", "--pipeline", "gguf:gguf", sample, "dry.gguf", "--dry-run"], 0, t)
    run("convert", ["--pipeline", "gguf:gguf", "-i", sample, "-o", "copy.gguf", "--json"], 0, t)
    run("convert", ["--pipeline", "gguf:gguf", "-i", sample, "-o", "copy.gguf", "--json", "--update"], 0, t)
    run("convert", ["--pipeline", "gguf:gguf", "-i", sample, "-o", "copy.gguf", "--json"], 1, t)  # exists
    run("convert", ["--pipeline", "gguf:nosuch:gguf", "-i", sample, "-o", "x.gguf", "--json"], 2, t)
    run("convert", ["--pipeline", "gguf:gguf", "-i", "missing.gguf", "-o", "x.gguf", "--json"], 1, t)
    run("convert", ["--pipeline", "gguf:bump[strict=2]", "-i", sample, "-o", "o2/", "--json"], 2, t)
    run("convert", ["--josn", "--json", "--pipeline", "gguf:gguf", "-i", sample, "-o", "y.gguf"], 2, t)
    run("convert", ["--json", "--pipeline", "gguf:gguf", "-i", sample], 2, t)  # no output
    # A failed conversion carries the warnings before it and the pipeline that plans instead.
    nf4 = run("convert", ["--json", "--pipeline", "gguf:repack[to=nf4]:safetensors", "-i", sample,
                          "-o", "nf4.safetensors"], 1, t)
    if nf4 is not None:
        if nf4["error"].get("suggestion") != "gguf:dequant:repack[to=nf4]:safetensors":
            fail(f"repack nf4 failure: suggestion {nf4['error'].get('suggestion')!r}")
        if not any("q4_K" in w for w in nf4["error"].get("warnings", [])):
            fail(f"repack nf4 failure: no repack warning in {nf4['error'].get('warnings')!r}")

    # inspect: one file, tensors, values, several files (one of them unreadable), failures.
    one = run("inspect", ["inspect", sample, "--json", "--tensors"], 0, t)
    run("inspect", ["--json", "inspect", "out/weights.bump"], 0, t)
    run("inspect", ["inspect", "r.safetensors", "--json"], 0, t)
    run("inspect", ["inspect", sample, "--json", "--kv", "general.name", "--kv", "tokenizer.ggml.tokens"], 0, t)
    run("inspect", ["inspect", sample, "out/weights.bump", "--json"], 0, t)
    several = run("inspect", ["inspect", sample, "garbage.bin", "--json"], 1, t)
    run("inspect", ["inspect", "garbage.bin", "--json"], 1, t)
    run("inspect", ["inspect", sample, "--json", "--kv", "general.nam"], 1, t)
    run("inspect", ["inspect", "--json"], 2, t)
    run("inspect", ["inspect", sample, "--json", "--tensor"], 0, t)  # an abbreviation Boost accepts
    # GGUF-lite: tensors stored as Q4, read as F32 (stored_type, stored_bytes).
    subprocess.run([ckhost, "-q", "--pipeline", "gguf:gguflite", "-i", sample, "-o", str(t / "m.gguflite")],
                   check=True)
    lite = run("inspect", ["inspect", "m.gguflite", "--json", "--tensors"], 0, t)
    if lite and not any("stored_type" in x for x in lite["tensors"]):
        fail("inspect m.gguflite: no tensor has a stored_type")

    # verify: a file with a NaN (exit 1, "ok": false with "problems"), sound files, several, and an
    # unsound one.
    tensors = json.loads(subprocess.run([ckhost, "inspect", sample, "--json", "--tensors"],
                                        capture_output=True, text=True, check=True).stdout)
    norm = next(x for x in tensors["tensors"] if x["name"] == "blk.0.ffn_norm.weight")
    nan = bytearray(pathlib.Path(sample).read_bytes())
    nan[norm["offset"] + 4 * 3:norm["offset"] + 4 * 4] = b"\x00\x00\xc0\x7f"  # element 3: NaN
    (t / "nan.gguf").write_bytes(nan)
    bad_data = run("verify", ["verify", "nan.gguf", "--data", "--json"], 1, t)
    if bad_data and not (bad_data.get("ok") is False and bad_data.get("problems")):
        fail("verify --data of nan.gguf: expected ok false with problems")
    run("verify", ["verify", "out/weights.bump", "--json"], 0, t)
    run("verify", ["verify", sample, "--data", "--json"], 0, t)
    run("verify", ["verify", sample, "out/weights.bump", "r.safetensors", "--json"], 0, t)
    run("verify", ["verify", sample, "garbage.bin", "--json"], 1, t)
    run("verify", ["verify", "garbage.bin", "--json"], 1, t)
    run("verify", ["verify", "--json", "--bogus", sample], 2, t)

    # compare: a file against itself and a quant of it (identical tensors: snr_db null), with a
    # report and an importance matrix; NaN in one file; --update up to date; failures.
    imatrix = str(pathlib.Path(__file__).resolve().parent.parent / "data" / "imatrix" /
                  "micro-llama-f16.imatrix.gguf")
    subprocess.run([ckhost, "-q", "--pipeline", "gguf:dequant:quantize[mix=q8_0]:gguf", "-i", sample, "-o",
                    str(t / "q8.gguf")], check=True)
    compared = run("compare", ["compare", sample, sample, "q8.gguf", "--json", "--report", "c.html",
                               "--imatrix", imatrix], 0, t)
    run("compare", ["compare", sample, "nan.gguf", "--json"], 0, t)
    run("compare", ["compare", sample, "q8.gguf", "--json", "--report", "u.html", "--update"], 0, t)
    run("compare", ["compare", sample, "q8.gguf", "--json", "--report", "u.html", "--update"], 0, t)
    run("compare", ["compare", sample, "missing.gguf", "--json"], 1, t)
    run("compare", ["compare", sample, "q8.gguf", "--json", "--report", "c.html"], 1, t)  # exists
    run("compare", ["compare", sample, "--json"], 2, t)
    run("compare", ["compare", sample, sample, "--top", "0", "--json"], 2, t)

    # plugins: the list, and a plugin directory that is not there.
    plugins = run("plugins", ["plugins", "--json"], 0, t)
    run("plugins", ["--json", "--plugin-dir", "no-such-dir", "plugins"], 2, t)
    run("plugins", ["plugins", "quantize", "--json"], 2, t)

    # help: the commands as a document.
    run("help", ["help", "--json"], 0, t)
    run("help", ["--json", "help"], 0, t)

    # batch: jobs that succeed and fail (their reports are convert documents), a missing file.
    run("batch", ["batch", "ok-jobs.txt", "--json", "-q"], 0, t)
    jobs = run("batch", ["batch", "jobs.txt", "--json", "-q", "--force"], 1, t)
    run("batch", ["batch", "no-such-jobs.txt", "--json"], 1, t)
    run("batch", ["batch", "--json", "--jobs", "0", "jobs.txt"], 2, t)
    # sharded: each shard's report (its document and DIR/shard-K.json), then batch-report of
    # them all (exit 1: jobs failed), of one shard only (exit 1; the other's jobs not run),
    # and its failures.
    run("batch", ["batch", "jobs.txt", "--json", "-q", "--shard", "0/2", "--report-dir", "reports"], 1, t)
    run("batch", ["batch", "jobs.txt", "--json", "-q", "--shard", "1/2", "--report-dir", "reports"], 1, t)
    merged = run("batch-report", ["batch-report", "reports", "--json", "--resubmit", "todo.txt"], 1, t)
    (t / "one").mkdir()
    (t / "one" / "shard-0.json").write_text((t / "reports" / "shard-0.json").read_text())
    run("batch-report", ["batch-report", "one", "--json"], 1, t)
    run("batch-report", ["--json", "batch-report", "no-such-dir"], 1, t)
    run("batch-report", ["batch-report", "--json"], 2, t)
    run("batch", ["batch", "jobs.txt", "--json", "--shard", "2/2"], 2, t)

    # The validator is real: documents that break the contract are refused.
    if main:
        def number_as_string(d):
            """bytes_out as a string"""
            d["bytes_out"] = str(d["bytes_out"])
        def no_schema(d):
            """no schema version"""
            del d["schema"]
        def dropped_as_text(d):
            """plan.dropped as a string"""
            d["plan"]["dropped"] = "output.weight"
        for change in (number_as_string, no_schema, dropped_as_text):
            refused("convert.schema.json", main, change)
    if one:
        def prose_fact(d):
            """a fact under a key with a space"""
            d["facts"]["data start"] = "23296"
        def shape_as_text(d):
            """a tensor shape as a string"""
            d["tensors"][0]["shape"] = "[256, 1024]"
        for change in (prose_fact, shape_as_text):
            refused("inspect.schema.json", one, change)
    if lite:
        def stored_bytes_without_type(d):
            """stored_bytes without stored_type"""
            x = next(x for x in d["tensors"] if "stored_type" in x)
            del x["stored_type"]
        def stored_bytes_as_text(d):
            """stored_bytes as a string"""
            x = next(x for x in d["tensors"] if "stored_type" in x)
            x["stored_bytes"] = str(x["stored_bytes"])
        for change in (stored_bytes_without_type, stored_bytes_as_text):
            refused("inspect.schema.json", lite, change)
    if compared:
        def infinite_snr_as_text(d):
            """the SNR of identical tensors as the string "inf" """
            d["comparisons"][0]["tensors"][0]["snr_db"] = "inf"
        def figures_without_identical(d):
            """a model's figures without "identical" """
            del d["comparisons"][0]["model"]["identical"]
        def unknown_status(d):
            """a tensor status the contract does not have"""
            d["comparisons"][0]["tensors"][0]["status"] = "skipped"
        for change in (infinite_snr_as_text, figures_without_identical, unknown_status):
            refused("compare.schema.json", compared, change)
    if plugins:
        def kinds_as_text(d):
            """kinds as a comma-separated string"""
            next(p for p in d["plugins"] if p["loaded"])["kinds"] = "reader, writer"
        refused("plugins.schema.json", plugins, kinds_as_text)
    if several:
        def bad_kind(d):
            """an error kind the contract does not have"""
            next(f for f in d["files"] if not f["ok"])["error"]["kind"] = "oops"
        refused("inspect.schema.json", several, bad_kind)
    if bad_data:
        def sound_with_problems(d):
            """"ok": true beside problems"""
            d["ok"] = True
        def problem_without_offset(d):
            """a problem without its offset"""
            del d["problems"][0]["offset"]
        for change in (sound_with_problems, problem_without_offset):
            refused("verify.schema.json", bad_data, change)
    if jobs:
        def status_unknown(d):
            """a job status the contract does not have"""
            d["jobs"][0]["status"] = "done"
        refused("batch.schema.json", jobs, status_unknown)
    if merged:
        def interrupted_status(d):
            """a merged job status other than ok, skipped, failed, not_run"""
            d["jobs"][0]["status"] = "interrupted"
        def not_run_without_reason(d):
            """a job not run without its reason"""
            j = next(j for j in d["jobs"] if j["status"] == "failed")
            j["status"] = "not_run"
            j.pop("reason", None)
        for change in (interrupted_status, not_run_without_reason):
            refused("batch-report.schema.json", merged, change)

print(f"{len(checked)} runs validated against {len(schemas)} schemas, {len(failures)} failures")
sys.exit(1 if failures else 0)
