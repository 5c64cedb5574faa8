#!/usr/bin/python3
"""Render brine's differential cases with Salt itself.

    salt-oracle.py --salt SALT_TREE --cases testdata/salt/jinja/cases.yaml \
        --out testdata/salt/jinja/salt-3006.6.json --grains testdata/salt/grains.yaml

SALT_TREE is an unpacked Salt release (../shared/peers/salt-3006.6.tar.gz:
the directory holding the `salt` package and `shim/`). Every case is
rendered as Salt renders an SLS or file template (salt.utils.templates.
render_jinja_tmpl: Jinja2 with StrictUndefined, Salt's filters, tests and
tags), with the context the case gives, `opts`, `saltenv` base, `salt`
(Salt's execution modules, loaded once), and the pinned grains of
--grains, so that the outputs depend on the case alone, not on this
machine.

The result maps each case's name to {"out": text} or {"error": "Kind:
message"}. It is written with sorted keys, so that a regenerated file
differs from the saved one only where Salt's answer did.

Run by `make interop`; Debian's python3 packages are enough (see
../shared/peers/README.md).
"""

import argparse
import json
import os
import re
import shutil
import sys
import tempfile

# The output kept for a nondeterministic case.
NONDETERMINISTIC = "(nondeterministic: only success is compared)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--salt", required=True, help="an unpacked Salt tree")
    ap.add_argument("--cases", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--grains", required=True, help="the pinned grains (testdata/salt/grains.yaml)")
    args = ap.parse_args()

    tree = os.path.abspath(args.salt)
    sys.path[:0] = [tree, os.path.join(tree, "shim")]
    import yaml  # noqa: E402  (Debian's, as Salt's own)

    import salt.config  # noqa: E402
    import salt.loader  # noqa: E402
    import salt.utils.templates  # noqa: E402
    import salt.version  # noqa: E402

    with open(args.cases, encoding="utf-8") as f:
        cases = yaml.safe_load(f) or []
    with open(args.grains, encoding="utf-8") as f:
        GRAINS = yaml.safe_load(f)

    root = tempfile.mkdtemp(prefix="salt-oracle-")
    files = os.path.join(root, "files")
    os.makedirs(files)
    opts = salt.config.minion_config(None)
    opts.update(
        {
            "id": GRAINS["id"],
            "file_client": "local",
            "root_dir": root,
            "cachedir": os.path.join(root, "cache"),
            "pki_dir": os.path.join(root, "pki"),
            "sock_dir": os.path.join(root, "sock"),
            "log_file": os.path.join(root, "minion.log"),
            "file_roots": {"base": [files]},
            "pillar_roots": {"base": [os.path.join(root, "pillar")]},
            "grains": dict(GRAINS),
            "pillar": {},
        }
    )
    funcs = salt.loader.minion_mods(opts)

    results = {}
    for case in cases:
        name = case["name"]
        # Each case's files alone are there: a name another case wrote
        # must not be found.
        shutil.rmtree(files)
        os.makedirs(files)
        for fname, text in (case.get("files") or {}).items():
            path = os.path.join(files, fname)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        template = case.get("template", "")
        tmplpath = None
        if case.get("main"):
            template = case["files"][case["main"]]
            tmplpath = os.path.join(files, case["main"])
        context = dict(case.get("context") or {})
        context.update(
            {
                "opts": opts,
                "saltenv": "base",
                "salt": funcs,
                "grains": dict(GRAINS),
                "pillar": context.get("pillar", {}),
            }
        )
        try:
            out = salt.utils.templates.render_jinja_tmpl(template, context, tmplpath=tmplpath)
            # What changes from run to run (a date, a random value, this
            # machine's files) is not kept: such a case compares success
            # only, and the saved file stays the same.
            results[name] = {"out": NONDETERMINISTIC if case.get("nondeterministic") else out}
        except Exception as e:  # pylint: disable=broad-except
            msg = str(e).splitlines()[0] if str(e) else ""
            # Temporary paths and object addresses change from run to run.
            msg = re.sub(r"0x[0-9a-f]+", "0x…", msg.replace(root, "<root>"))
            results[name] = {"error": "%s: %s" % (type(e).__name__, msg)}
        sys.stderr.write(".")
        sys.stderr.flush()
    sys.stderr.write("\n")
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(
            {"salt": salt.version.__version__, "cases": results},
            f,
            indent=1,
            sort_keys=True,
            ensure_ascii=False,
        )
        f.write("\n")
    errors = sum(1 for r in results.values() if "error" in r)
    print("%d cases rendered by Salt %s (%d errors) -> %s" % (len(results), salt.version.__version__, errors, args.out))


if __name__ == "__main__":
    main()
