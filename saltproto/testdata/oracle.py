"""Salt 3006.6's own code, driven by saltproto's differential tests.

Reads one JSON request a line on stdin ({"op": ..., ...}), writes one JSON
answer a line on stdout ({"ok": ...} or {"error": ...}). Bytes travel as
hex. Decoded values are answered in a tagged form (canon) that the Go side
builds too, so that str and bytes, int and float, list and dict compare
exactly. Run with PYTHONPATH=$SALT_SRC:$SALT_SRC/shim.
"""

import binascii
import datetime
import hashlib
import json
import logging
import os
import sys
import traceback
import types

# salt.crypt first: it and salt.channel.client import each other, and
# Salt itself loads salt.crypt first.
import salt.crypt  # isort:skip
import salt.channel.client
import salt.ext.tornado.concurrent
import salt.payload
import salt.transport.zeromq
import salt.utils.crypt
import salt.utils.stringutils
from salt.defaults import _Constant

# Salt logs every refusal the tests provoke; ORACLE_VERBOSE=1 shows them.
if not os.environ.get("ORACLE_VERBOSE"):
    logging.disable(logging.CRITICAL)

try:
    from Cryptodome.Cipher import PKCS1_OAEP
except ImportError:  # pragma: no cover
    from Crypto.Cipher import PKCS1_OAEP


def unhex(s):
    return binascii.unhexlify(s) if s is not None else None


def canon_key(k):
    if isinstance(k, str):
        return "str:" + k
    if isinstance(k, bytes):
        return "bytes:" + k.hex()
    if isinstance(k, bool):
        return "bool:" + str(k)
    if isinstance(k, int):
        return "int:" + str(k)
    if isinstance(k, float):
        return "float:" + repr(k)
    if k is None:
        return "none"
    return "other:" + repr(k)


def canon(v):
    if v is None:
        return ["none"]
    if isinstance(v, bool):
        return ["bool", v]
    if isinstance(v, int):
        return ["int", str(v)]
    if isinstance(v, float):
        return ["float", repr(v)]
    if isinstance(v, str):
        return ["str", v]
    if isinstance(v, bytes):
        return ["bytes", v.hex()]
    if isinstance(v, (list, tuple)):
        return ["list", [canon(x) for x in v]]
    if isinstance(v, dict):
        return ["dict", {canon_key(k): canon(x) for k, x in v.items()}]
    if isinstance(v, datetime.datetime):
        return ["datetime", v.isoformat()]
    if isinstance(v, _Constant):
        return ["const", v.name, canon(v.value)]
    return ["other", repr(v)]


def ev(expr):
    return eval(expr, {"datetime": datetime, "_Constant": _Constant})  # nosec


OPTS = {"id": "oracle", "__role": "minion"}
CRYPTICLES = {}
SIGNINS = {}


def crypticle(key):
    # One Crypticle per key, kept: its serial is the replay guard.
    if key not in CRYPTICLES:
        CRYPTICLES[key] = salt.crypt.Crypticle(OPTS, key)
    return CRYPTICLES[key]


def op_payload(req):
    out = []
    for case in req["cases"]:
        py = salt.payload.dumps(ev(case["expr"]))
        out.append(
            {
                "py": py.hex(),
                "canon_py": canon(salt.payload.loads(py)),
                "canon_go": canon(salt.payload.loads(unhex(case["go"]))),
            }
        )
    return out


def op_crypt_dumps(req):
    c = salt.crypt.Crypticle(OPTS, req["key"])
    return c.dumps(ev(req["expr"]), nonce=req.get("nonce") or None).hex()


def op_crypt_loads(req):
    # A fresh Crypticle unless "keep": serial state only when asked for.
    if req.get("keep"):
        c = crypticle(req["key"])
    else:
        c = salt.crypt.Crypticle(OPTS, req["key"])
    return canon(c.loads(unhex(req["data"]), nonce=req.get("nonce") or None))


def op_genkey(req):
    return salt.crypt.Crypticle.generate_key_string()


def op_gen_keys(req):
    return salt.crypt.gen_keys(req["dir"], req["name"], req["keysize"])


def op_finger(req):
    return salt.utils.crypt.pem_finger(req["path"], sum_type=req.get("hash", "sha256"))


def op_load_keys(req):
    key = salt.crypt.get_rsa_key(req["pem"], None)
    pub = salt.crypt.get_rsa_pub_key(req["pub"])
    with open(req["pem"], "rb") as fh:
        pem = fh.read()
    with open(req["pub"], "rb") as fh:
        pubtext = fh.read()
    return {
        "n": format(key.n, "x"),
        "pub_n": format(pub.n, "x"),
        "e": key.e,
        # What gen_keys would have written for these keys.
        "pem_same": key.exportKey("PEM") == pem,
        "pub_same": pub.exportKey("PEM") == pubtext,
    }


def op_sign(req):
    return salt.crypt.sign_message(req["pem"], unhex(req["msg"])).hex()


def op_verify(req):
    return bool(salt.crypt.verify_signature(req["pub"], unhex(req["msg"]), unhex(req["sig"])))


def op_private_encrypt(req):
    key = salt.crypt.get_rsa_key(req["pem"], None)
    return salt.crypt.private_encrypt(key, unhex(req["msg"])).hex()


def op_public_decrypt(req):
    pub = salt.crypt.get_rsa_pub_key(req["pub"])
    return salt.crypt.public_decrypt(pub, unhex(req["sig"])).hex()


def op_oaep_encrypt(req):
    pub = salt.crypt.get_rsa_pub_key(req["pub"])
    return PKCS1_OAEP.new(pub).encrypt(unhex(req["msg"])).hex()


def op_oaep_decrypt(req):
    key = salt.crypt.get_rsa_key(req["pem"], None)
    return PKCS1_OAEP.new(key).decrypt(unhex(req["ct"])).hex()


def minion_opts(pki, minion_id, extra):
    opts = {
        "id": minion_id,
        "pki_dir": pki,
        "master_uri": "tcp://127.0.0.1:4506",
        "__role": "minion",
        "keysize": 2048,
        "rejected_retry": True,
        "acceptance_wait_time": 10,
        "open_mode": False,
        "verify_master_pubkey_sign": False,
        "always_verify_signature": False,
        "master_sign_key_name": "master_sign",
        "hash_type": "sha256",
        "auth_trb": False,
        "master": "127.0.0.1",
    }
    opts.update(extra or {})
    return opts


def op_signin_payload(req):
    """AsyncAuth.minion_sign_in_payload of a minion with its keys in pki
    (made by gen_keys when missing), built without the IOLoop sign-in that
    AsyncAuth's constructor starts."""
    opts = minion_opts(req["pki"], req["id"], req.get("opts"))
    auth = object.__new__(salt.crypt.AsyncAuth)
    auth.opts = opts
    auth.token = salt.utils.stringutils.to_bytes(
        salt.crypt.Crypticle.generate_key_string()
    )
    auth.pub_path = os.path.join(opts["pki_dir"], "minion.pub")
    auth.rsa_path = os.path.join(opts["pki_dir"], "minion.pem")
    auth.mpub = "minion_master.pub"
    if not os.path.isfile(auth.pub_path):
        auth.get_keys()
    payload = auth.minion_sign_in_payload()
    SIGNINS[req["handle"]] = (auth, payload)
    return {
        "load": salt.payload.dumps(payload).hex(),
        "has_token": "token" in payload,
        "nonce": payload["nonce"],
    }


def op_signin_response(req):
    """AsyncAuth.handle_signin_response on the master's reply, as the
    channel hands it over (salt.payload.loads of the frame)."""
    auth, payload = SIGNINS[req["handle"]]
    auth.opts.update(req.get("opts") or {})
    reply = salt.payload.loads(unhex(req["reply"]))
    try:
        ret = auth.handle_signin_response(payload, reply)
    except SystemExit as exc:
        return {"exit": exc.code}
    except Exception as exc:  # pylint: disable=broad-except
        return {"raised": type(exc).__name__ + ": " + str(exc)}
    if isinstance(ret, dict):
        with open(os.path.join(auth.opts["pki_dir"], auth.mpub)) as fh:
            master_pub = fh.read()
        return {
            "ret": "creds",
            "aes": salt.utils.stringutils.to_str(ret["aes"]),
            "publish_port": ret["publish_port"],
            "master_pub": master_pub,
        }
    return {"ret": canon(ret)}


def op_pub_decode(req):
    """PublishClient._decode_messages, AsyncPubChannel._verify_master_signature
    and the Crypticle's loads: what a minion does with a publish."""
    opts = {"id": req["id"], "__role": "minion", "sign_pub_messages": req["sign"]}
    client = object.__new__(salt.transport.zeromq.PublishClient)
    client.opts = opts
    # What Transport.__init__ sets, so that __del__ stays quiet.
    client._connect_called = False
    client._closing = True
    client.hexid = hashlib.sha1(salt.utils.stringutils.to_bytes(req["id"])).hexdigest()
    payload = client._decode_messages([unhex(f) for f in req["frames"]]).result()
    if payload is None:
        return {"for_me": False}
    chan = object.__new__(salt.channel.client.AsyncPubChannel)
    chan.opts = opts
    chan.master_pubkey_path = req["master_pub"]
    try:
        chan._verify_master_signature(payload)
    except salt.crypt.AuthenticationError as exc:
        return {"raised": "AuthenticationError: " + str(exc)}
    load = crypticle(req["key"]).loads(payload["load"])
    return {"for_me": True, "load": canon(load)}


def op_private(req):
    """AsyncReqChannel.crypted_transfer_decode_dictentry on a reply, the
    request nonce fixed so that the master side could be computed first."""
    nonce = req["nonce"]
    salt.channel.client.uuid = types.SimpleNamespace(
        uuid4=lambda: types.SimpleNamespace(hex=nonce)
    )
    reply = salt.payload.loads(unhex(req["reply"]))
    minion_pem = os.path.join(req["pki"], "minion.pem")

    class Transport:
        def send(self, load, timeout=None):
            fut = salt.ext.tornado.concurrent.Future()
            fut.set_result(reply)
            return fut

    class Auth:
        authenticated = True
        crypticle = salt.crypt.Crypticle(OPTS, req["key"])

        def get_keys(self):
            return salt.crypt.get_rsa_key(minion_pem, None)

    chan = object.__new__(salt.channel.client.AsyncReqChannel)
    chan.opts = {"pki_dir": req["pki"]}
    chan.transport = Transport()
    chan.auth = Auth()
    chan.master_pubkey_path = req["master_pub"]
    chan.tries = 1
    chan.timeout = 1
    try:
        ret = chan.crypted_transfer_decode_dictentry(
            {"cmd": "_pillar", "id": "m"}, dictkey=req["dictkey"]
        ).result()
    except Exception as exc:  # pylint: disable=broad-except
        return {"raised": type(exc).__name__ + ": " + str(exc)}
    return {"data": canon(ret)}


def op_request(req):
    """What a 3006 minion sends for an aes request: _package_load of
    crypticle.dumps(load) with the nonce AsyncReqChannel adds."""
    load = ev(req["expr"])
    load["nonce"] = req["nonce"]
    c = salt.crypt.Crypticle(OPTS, req["key"])
    msg = {"enc": "aes", "load": c.dumps(load), "version": 2}
    return salt.payload.dumps(msg).hex()


def op_reply(req):
    """_crypted_transfer's reading of the reply: loads with the nonce."""
    data = salt.payload.loads(unhex(req["frame"]))
    c = salt.crypt.Crypticle(OPTS, req["key"])
    try:
        return {"data": canon(c.loads(data, nonce=req["nonce"]))}
    except Exception as exc:  # pylint: disable=broad-except
        return {"raised": type(exc).__name__ + ": " + str(exc)}


def main():
    for line in sys.stdin:
        req = json.loads(line)
        try:
            out = {"ok": globals()["op_" + req["op"]](req)}
        except Exception:  # pylint: disable=broad-except
            out = {"error": traceback.format_exc()}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
