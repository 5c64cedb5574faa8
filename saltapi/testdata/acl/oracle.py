"""Salt's own verdicts for brine's salt-api ACL and file eauth tests.

Reads {"targets": {"<tgt_type>:<expr>": [ids]}, "cases": [...]} as JSON on
stdin and prints one verdict per case as a JSON list. The targeting is the
fixed table "targets" (a list target's expr joined with ','), so that Salt's
CkMinions and brine's checks see the same fleet and only the ACL logic is
compared. Cases:

  {"kind": "local", "perms", "funs", "args", "tgt", "tgt_type"}  -> auth_check
  {"kind": "runner"|"wheel", "perms", "fun", "args"}            -> spec_check
  {"kind": "fill", "acl", "name"}                               -> fill_auth_list
  {"kind": "file", "config", "username", "password", "acl"}     -> salt.auth.file.auth
      and, when it authenticates, the /login perms (sum_permissions, sorted_permissions)

A check that raises is a refusal, as it is in Salt's master: the verdict is
false with "raised" naming the exception.
"""
import copy
import json
import sys

import salt.auth.file
import salt.modules.hashutil
import salt.netapi
import salt.utils.minions


def key(expr, tgt_type):
    if isinstance(expr, list):
        expr = ",".join(expr)
    return "{}:{}".format(tgt_type, expr)


def main():
    req = json.load(sys.stdin)
    targets = req["targets"]
    ck = salt.utils.minions.CkMinions(
        {"cachedir": "/nonexistent", "pki_dir": "/nonexistent", "transport": "zeromq"}
    )
    ck.check_minions = lambda expr, tgt_type="glob", *a, **kw: {
        "minions": list(targets.get(key(expr, tgt_type), [])),
        "missing": [],
    }
    hashutil = salt.modules.hashutil
    hashutil.__salt__ = {
        "hashutil.md5_digest": hashutil.md5_digest,
        "hashutil.sha256_digest": hashutil.sha256_digest,
        "hashutil.sha512_digest": hashutil.sha512_digest,
    }
    salt.auth.file.__salt__ = {"hashutil.digest": hashutil.digest}
    out = []
    for case in req["cases"]:
        kind = case["kind"]
        res = {}
        try:
            if kind == "local":
                v = ck.auth_check(
                    case["perms"], case["funs"], case["args"], case["tgt"], case["tgt_type"]
                )
            elif kind in ("runner", "wheel"):
                v = ck.spec_check(case["perms"], case["fun"], case["args"], kind)
                if isinstance(v, dict) and "error" in v:
                    res["error"] = v["error"]["name"]
                    v = False
            elif kind == "fill":
                res["list"] = ck.fill_auth_list(case["acl"], case["name"], [])
                v = True
            elif kind == "file":
                conf = dict(case["config"])
                conf.update(copy.deepcopy(case.get("acl", {})))
                salt.auth.file.__opts__ = {"external_auth": {"file": conf}}
                try:
                    v = salt.auth.file.auth(case["username"], case["password"])
                except Exception as exc:  # LoadAuth.__auth_call: a failed login
                    res["raised"] = type(exc).__name__
                    v = False
                if v:
                    perms = salt.netapi.sum_permissions(
                        {"name": case["username"]}, copy.deepcopy(conf)
                    )
                    res["perms"] = salt.netapi.sorted_permissions(perms)
            else:
                raise ValueError("unknown kind " + kind)
        except Exception as exc:
            res["raised"] = type(exc).__name__
            v = False
        res["ok"] = bool(v)
        out.append(res)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
