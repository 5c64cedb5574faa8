"""A libzmq peer (pyzmq) in the role of a salt-master, for client_test.go.

Its sockets are what Salt 3006's salt/transport/zeromq.py binds on a
master: a ROUTER on the request port (RequestServer.zmq_device: each
request arrives as [identity, "", payload] and the reply goes back as
[identity, "", reply]), and on the publish port an XPUB, which is
PublishServer's PUB (same wire, same filtering on the publisher's side)
that also hands its owner the subscriptions, so that this peer publishes
only once the Go subscriber's subscriptions have arrived.

Reads one JSON object from stdin:
  mode        "router" or "xpub"
  count       router: answer this many requests ("re:" + payload)
  subscribe   xpub: the subscriptions to wait for (base64 topics)
  publish     xpub: messages to publish then, each a list of base64 frames
  timeout_ms  how long to wait for each request, or for the subscriptions

Writes JSON lines to stdout: {"endpoint": "tcp://127.0.0.1:N"} once bound,
{"frames": [base64...]} for every request (router) or subscription message
(xpub) received, and last {"done": N}. Exits 1 with the reason on stderr
when a request or a subscription does not come in time.
"""

import base64
import json
import sys

import zmq


def out(obj):
    print(json.dumps(obj), flush=True)


def fail(msg):
    print(msg, file=sys.stderr, flush=True)
    sys.exit(1)


def b64(frames):
    return [base64.b64encode(f).decode() for f in frames]


def main():
    cfg = json.loads(sys.stdin.readline())
    timeout = cfg["timeout_ms"]
    ctx = zmq.Context()
    done = 0
    if cfg["mode"] == "router":
        sock = ctx.socket(zmq.ROUTER)
        port = sock.bind_to_random_port("tcp://127.0.0.1")
        out({"endpoint": "tcp://127.0.0.1:%d" % port})
        for _ in range(cfg["count"]):
            if not sock.poll(timeout):
                fail("no request within %d ms" % timeout)
            msg = sock.recv_multipart()
            out({"frames": b64(msg[1:])})
            sock.send_multipart(msg[:-1] + [b"re:" + msg[-1]])
            done += 1
    else:
        sock = ctx.socket(zmq.XPUB)
        port = sock.bind_to_random_port("tcp://127.0.0.1")
        out({"endpoint": "tcp://127.0.0.1:%d" % port})
        want = {b"\x01" + base64.b64decode(t) for t in cfg["subscribe"]}
        while want:
            if not sock.poll(timeout):
                fail("subscriptions missing after %d ms: %r" % (timeout, want))
            msg = sock.recv_multipart()
            out({"frames": b64(msg)})
            want.discard(msg[0])
        for m in cfg["publish"]:
            sock.send_multipart([base64.b64decode(f) for f in m])
            done += 1
    out({"done": done})
    # Linger until what was sent is written, then exit.
    sock.close(5000)
    ctx.term()


main()
