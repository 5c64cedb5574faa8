"""A libzmq CURVE server (pyzmq ROUTER) for the Go tests.

Reads one JSON object from stdin:
  secret      the server's secret key (Z85)
  allow       client public keys (Z85) a ZAP handler accepts (others get
              ZAP status 400, which libzmq sends as an ERROR "400");
              null: no ZAP handler, every client is accepted
  expect      frames every request must start with, base64
  expect_none when true, no request may arrive

Binds to a free loopback port and prints its endpoint on stdout, then
answers every request [id, frames...] with [id, "echo", frames...] until
stdin is closed. Exits 0, or 1 with the reason on stderr.
"""

import base64
import json
import sys
import threading

import zmq
from zmq.utils import z85


def fail(msg):
    print(msg, file=sys.stderr, flush=True)
    sys.exit(1)


def zap_handler(ctx, allow, ready, stop):
    sock = ctx.socket(zmq.REP)
    sock.linger = 0
    sock.bind("inproc://zeromq.zap.01")
    ready.set()
    while not stop.is_set():
        if not sock.poll(50):
            continue
        version, request_id, _domain, _address, _identity, mechanism, *creds = sock.recv_multipart()
        key = z85.encode(creds[0]).decode() if mechanism == b"CURVE" and creds else ""
        ok = key in allow
        print("zap %s %s" % ("allowed" if ok else "denied", key), file=sys.stderr, flush=True)
        sock.send_multipart([version, request_id, b"200" if ok else b"400",
                             b"OK" if ok else b"not allowed", key.encode() if ok else b"", b""])
    sock.close()


def main():
    cfg = json.loads(sys.stdin.readline())
    expect = [base64.b64decode(f) for f in cfg["expect"]]
    ctx = zmq.Context()
    stop = threading.Event()
    zap = None
    if cfg["allow"] is not None:
        ready = threading.Event()
        zap = threading.Thread(target=zap_handler, args=(ctx, cfg["allow"], ready, stop))
        zap.start()
        ready.wait()

    sock = ctx.socket(zmq.ROUTER)
    sock.linger = 1000
    sock.curve_server = True
    sock.curve_secretkey = cfg["secret"].encode()
    sock.bind("tcp://127.0.0.1:*")
    print(sock.last_endpoint.decode(), flush=True)

    poller = zmq.Poller()
    poller.register(sock, zmq.POLLIN)
    poller.register(sys.stdin, zmq.POLLIN)
    served = 0
    try:
        while True:
            events = dict(poller.poll(10000))
            if sock in events:
                ident, *frames = sock.recv_multipart()
                if cfg.get("expect_none"):
                    fail("unexpected request: %r" % frames)
                if frames[:len(expect)] != expect:
                    fail("request %r, want it to start with %r" % ([f[:40] for f in frames], [f[:40] for f in expect]))
                sock.send_multipart([ident, b"echo"] + frames)
                served += 1
            elif events:
                break  # stdin closed: the Go test is done
            else:
                fail("nothing happened for 10 s")
        print("served %d" % served, flush=True)
    finally:
        stop.set()
        if zap is not None:
            zap.join()
        sock.close()
        ctx.term()


if __name__ == "__main__":
    main()
