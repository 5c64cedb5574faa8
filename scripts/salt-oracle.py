#!/usr/bin/python3
"""Render brine's differential cases with Salt itself.

    salt-oracle.py --salt SALT_TREE --cases testdata/salt/jinja/cases.yaml \
        --out testdata/salt/jinja/salt-3006.6.json --grains testdata/salt/grains.yaml

    salt-oracle.py --suite formulas --salt SALT_TREE \
        --cases testdata/salt/formulas/cases.yaml \
        --out testdata/salt/formulas/salt-3006.6.json --grains testdata/salt/grains.yaml

Three suites (--suite; without it, the cases file says which: a list of
{formula, sls} is the formulas suite, one of {name, sls} the states suite):

jinja: templates, each rendered alone (below).

formulas: public Salt formulas (testdata/salt/formulas/<formula>/tree as
file_roots, its pillar.yaml as the pillar): each SLS named is compiled as
state.show_sls and state.show_low_sls compile it (salt/modules/state.py:
salt.state.HighState with the pillar as pillar_override, render_highstate,
verify_high; compile_high_data for the low chunks), with opts['grains']
the pinned grains, so that nothing comes from this machine. See
testdata/salt/formulas/README.md for what is kept.

states: SLS trees run as state.sls runs them (salt-call --local
state.sls requisite [test=True], in process): each state's key, result,
comment, sorted changes keys and __run_num__, or Salt's compile errors.
The states have no side effects (test.*, cmd.run of echo/true/false).
See testdata/salt/states/README.md.

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
    ap.add_argument("--suite", choices=["jinja", "formulas", "states"], help="the suite (default: read from the cases file)")
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
    suite = args.suite
    if suite is None:
        suite = "formulas" if cases and isinstance(cases[0], dict) and "formula" in cases[0] else "jinja"
        if cases and isinstance(cases[0], dict) and "sls" in cases[0] and "formula" not in cases[0]:
            suite = "states"
    if suite == "formulas":
        formulas(args, cases, GRAINS)
        return
    if suite == "states":
        states(args, cases, GRAINS)
        return

    root = tempfile.mkdtemp(prefix="salt-oracle-")
    files = os.path.join(root, "files")
    os.makedirs(files)
    opts = local_opts(root, GRAINS, files, os.path.join(root, "pillar"), pillar={})
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


def local_opts(root, grains, file_root, pillar_root, **extra):
    """A masterless minion's opts (file_client local) living under root,
    with the pinned grains, one file root and one pillar root."""
    import salt.config  # noqa: E402

    opts = salt.config.minion_config(None)
    opts.update(
        {
            "id": grains["id"],
            "file_client": "local",
            "root_dir": root,
            "cachedir": os.path.join(root, "cache"),
            "pki_dir": os.path.join(root, "pki"),
            "sock_dir": os.path.join(root, "sock"),
            "log_file": os.path.join(root, "minion.log"),
            "file_roots": {"base": [file_root]},
            "pillar_roots": {"base": [pillar_root]},
            "grains": dict(grains),
        }
    )
    opts.update(extra)
    return opts


def normalise_error(msg, roots):
    """A compile error as kept: its first line, without the temporary
    paths and object addresses that change from run to run."""
    msg = str(msg)
    for root, name in roots:
        msg = msg.replace(root, name)
    return re.sub(r"0x[0-9a-f]+", "0x…", msg)


def plain(v):
    """Salt's high data as JSON has it: OrderedDicts and other mappings
    are objects (in their order), tuples lists; what JSON has no form for
    is its repr."""
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    return "<python %s: %r>" % (type(v).__name__, v)


def formulas(args, cases, GRAINS):
    """The formulas suite: each case is {formula: name, sls: [SLS…]}; the
    result maps "<formula>/<sls>" to {"high": show_sls's high data, "low":
    show_low_sls's chunks} or {"error": [messages]} (Salt's compile errors,
    as show_sls returns them), and "<formula>/pillar" to the pillar Salt
    compiled, so that a difference in the pillar shows as such."""
    import salt.config  # noqa: E402
    import salt.state  # noqa: E402
    import salt.utils.yaml  # noqa: E402
    import salt.version  # noqa: E402

    base = os.path.dirname(os.path.abspath(args.cases))
    # The suite's own grains.yaml adds the core grains formulas read.
    GRAINS = dict(GRAINS)
    extra = os.path.join(base, "grains.yaml")
    if os.path.exists(extra):
        with open(extra, encoding="utf-8") as f:
            GRAINS.update(salt.utils.yaml.safe_load(f) or {})
    results = {}
    for case in cases:
        formula = case["formula"]
        fdir = os.path.join(base, formula)
        tree = os.path.join(fdir, "tree")
        # Salt's yaml renderer's loader reads the pillar, as it would read
        # a pillar SLS of plain YAML.
        try:
            with open(os.path.join(fdir, "pillar.yaml"), encoding="utf-8") as f:
                pillar = salt.utils.yaml.safe_load(f) or {}
        except Exception as e:  # pylint: disable=broad-except
            err = "pillar.yaml: %s: %s" % (type(e).__name__, str(e).splitlines()[0])
            for sls in case["sls"]:
                results["%s/%s" % (formula, sls)] = {"error": [err]}
            continue
        for sls in case["sls"]:
            root = tempfile.mkdtemp(prefix="salt-oracle-")
            empty = os.path.join(root, "pillar")
            os.makedirs(empty)
            opts = local_opts(root, GRAINS, tree, empty, saltenv="base", pillarenv=None, test=False)
            roots = [(tree, "<tree>"), (root, "<root>"), (os.path.abspath(args.salt), "<salt>")]
            key = "%s/%s" % (formula, sls)
            try:
                # salt/modules/state.py show_sls and show_low_sls, for one
                # SLS: a fresh HighState each (its high data accumulates).
                st_ = salt.state.HighState(opts, pillar_override=pillar)
                with st_:
                    if "%s/pillar" % formula not in results:
                        results["%s/pillar" % formula] = {"pillar": plain(st_.opts["pillar"])}
                    st_.push_active()
                    try:
                        high_, errors = st_.render_highstate({"base": [sls]})
                    finally:
                        st_.pop_active()
                    errors += st_.state.verify_high(high_)
                    if errors:
                        results[key] = {"error": [normalise_error(e, roots) for e in errors]}
                    else:
                        high = plain(high_)
                        low = plain(st_.state.compile_high_data(high_))
                        results[key] = {"high": high, "low": low}
            except Exception as e:  # pylint: disable=broad-except
                msg = str(e).splitlines()[0] if str(e) else ""
                results[key] = {"error": ["%s: %s" % (type(e).__name__, normalise_error(msg, roots))]}
            shutil.rmtree(root, ignore_errors=True)
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
    print("%d SLS compiled by Salt %s (%d errors) -> %s" % (len(results) - len(cases), salt.version.__version__, errors, args.out))


FAILED = "One or more requisite failed: "


def summarise(ret):
    """A state return as the states suite keeps it: per state key its
    result, comment, sorted changes keys and __run_num__ (what changes
    from run to run, a pid, a duration, a start time, is not kept); a
    list (compile errors) as {"error": [messages]}."""
    if not isinstance(ret, dict):
        return {"error": [str(e) for e in (ret if isinstance(ret, list) else [ret])]}
    out = {}
    for key, res in ret.items():
        changes = res.get("changes")
        comment = res.get("comment", "")
        if isinstance(comment, str) and comment.startswith(FAILED):
            # Salt joins a set of names, in hash order: kept sorted.
            comment = FAILED + ", ".join(sorted(comment[len(FAILED):].split(", ")))
        out[key] = {
            "result": res.get("result"),
            "comment": comment if isinstance(comment, str) else plain(comment),
            "changes": sorted(str(k) for k in changes) if isinstance(changes, dict) else plain(changes),
            "run_num": res.get("__run_num__"),
        }
    return {"states": out}


def states(args, cases, GRAINS):
    """The states suite: each case is {name, sls, files?, test?}: sls is
    written as requisite.sls (files beside it, by name) in an empty
    file_roots, and state.sls requisite runs, as salt-call --local runs it,
    with test=True when the case says so."""
    import salt.config  # noqa: E402
    import salt.loader  # noqa: E402
    import salt.version  # noqa: E402

    # cmd.run reads the shell grain, which the pinned grains leave out.
    GRAINS = dict(GRAINS, shell="/bin/sh")
    root = tempfile.mkdtemp(prefix="salt-oracle-")
    files = os.path.join(root, "files")
    results = {}
    opts = local_opts(root, GRAINS, files, os.path.join(root, "pillar"), test=False)
    # state.sls sets its retcode with __utils__' state.check_result.
    funcs = salt.loader.minion_mods(opts, utils=salt.loader.utils(opts))
    for case in cases:
        # Each case's files alone, and nothing cached of another's.
        shutil.rmtree(files, ignore_errors=True)
        shutil.rmtree(os.path.join(root, "cache", "files"), ignore_errors=True)
        os.makedirs(files)
        tree = dict(case.get("files") or {})
        if case.get("sls") is not None:
            tree["requisite.sls"] = case["sls"]
        for fname, text in tree.items():
            path = os.path.join(files, fname)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        kwargs = dict(case.get("kwargs") or {})
        if case.get("test"):
            kwargs["test"] = True
        try:
            ret = funcs["state.sls"](case.get("mods", "requisite"), **kwargs)
            results[case["name"]] = summarise(ret)
        except Exception as e:  # pylint: disable=broad-except
            msg = str(e).splitlines()[0] if str(e) else ""
            results[case["name"]] = {"error": ["%s: %s" % (type(e).__name__, normalise_error(msg, [(root, "<root>")]))]}
        sys.stderr.write(".")
        sys.stderr.flush()
    sys.stderr.write("\n")
    shutil.rmtree(root, ignore_errors=True)
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
    print("%d SLS run by Salt %s (%d compile errors) -> %s" % (len(results), salt.version.__version__, errors, args.out))


if __name__ == "__main__":
    main()
