"""A libzmq CURVE client (pyzmq DEALER) for the Go tests.

Reads one JSON object from stdin:
  endpoint    where to connect
  server_key  the server's public key (Z85)
  public      this client's public key (Z85)
  secret      this client's secret key (Z85)
  send        frames to send, base64
  rounds      how many times to send them (the round number is appended as a
              last frame) and expect ["echo"] + frames + [round] back
  expect_none when true, no reply may arrive within timeout_ms
  timeout_ms  how long to wait for each reply

Exits 0 after printing "ok" (or "no reply" when expect_none), 1 with the
reason on stderr otherwise.
"""

import base64
import json
import sys

import zmq


def fail(msg):
    print(msg, file=sys.stderr, flush=True)
    sys.exit(1)


def main():
    cfg = json.loads(sys.stdin.readline())
    secret = cfg["secret"].encode()
    public = cfg["public"].encode()
    if zmq.curve_public(secret) != public:
        fail("libzmq computes public key %s for the secret key, Go gave %s"
             % (zmq.curve_public(secret).decode(), cfg["public"]))
    frames = [base64.b64decode(f) for f in cfg["send"]]
    timeout = cfg["timeout_ms"]

    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.linger = 0
    sock.curve_secretkey = secret
    sock.curve_publickey = public
    sock.curve_serverkey = cfg["server_key"].encode()
    sock.connect(cfg["endpoint"])
    try:
        for i in range(cfg["rounds"]):
            msg = frames + [str(i).encode()]
            sock.send_multipart(msg)
            got = sock.poll(timeout)
            if cfg.get("expect_none"):
                if got:
                    fail("unexpected reply: %r" % sock.recv_multipart())
                print("no reply", flush=True)
                return
            if not got:
                fail("round %d: no reply within %d ms" % (i, timeout))
            reply = sock.recv_multipart()
            if reply != [b"echo"] + msg:
                fail("round %d: reply %r, want %r" % (i, [f[:40] for f in reply], [f[:40] for f in [b"echo"] + msg]))
        print("ok", flush=True)
    finally:
        sock.close()
        ctx.term()


if __name__ == "__main__":
    main()
