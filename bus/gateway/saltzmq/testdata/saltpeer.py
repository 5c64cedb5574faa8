"""A libzmq peer (pyzmq) in the role of a salt-minion, for interop_test.go.

Its sockets are set up as Salt 3006's salt/transport/zeromq.py sets up a
minion's: a REQ (AsyncReqMessageClient: linger, RECONNECT_IVL_MAX, TCP
keepalive) sending one frame per request and reading one frame per reply,
and a SUB (PublishClient: IDENTITY set to the minion id, subscribed to b""
or, with zmq_filtering, to b"broadcast" and the sha1 hex of the id).

Reads one JSON object from stdin:
  mode        "req" or "sub"
  endpoint    where to connect
  requests    req: payloads to send in turn (base64), each answered before
              the next is sent
  subscribe   sub: topics to subscribe to (base64; "" is everything)
  identity    sub: the socket's IDENTITY (Salt sets the minion id)
  count       sub: stop after this many messages
  timeout_ms  how long to wait for each reply, or for all messages

Writes JSON lines to stdout: {"connected": true} once a sub's connection
is up (after libzmq's HANDSHAKE_SUCCEEDED), {"frames": [base64...]} for
every message received, and last {"done": N}. Exits 1 with the reason on
stderr when a reply or a message does not come in time.
"""

import base64
import json
import sys
import time

import zmq
from zmq.utils.monitor import recv_monitor_message


def out(obj):
    print(json.dumps(obj), flush=True)


def fail(msg):
    print(msg, file=sys.stderr, flush=True)
    sys.exit(1)


def keepalive(sock):
    # salt.transport.zeromq._set_tcp_keepalive with the minion's defaults.
    sock.setsockopt(zmq.TCP_KEEPALIVE, 1)
    sock.setsockopt(zmq.TCP_KEEPALIVE_IDLE, 300)
    sock.setsockopt(zmq.TCP_KEEPALIVE_CNT, -1)
    sock.setsockopt(zmq.TCP_KEEPALIVE_INTVL, -1)


def main():
    cfg = json.loads(sys.stdin.readline())
    timeout = cfg["timeout_ms"]
    ctx = zmq.Context()
    received = 0
    if cfg["mode"] == "req":
        sock = ctx.socket(zmq.REQ)
        sock.setsockopt(zmq.RECONNECT_IVL_MAX, 5000)
        keepalive(sock)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(cfg["endpoint"])
        for req in cfg["requests"]:
            sock.send(base64.b64decode(req))
            if not sock.poll(timeout):
                fail("no reply within %d ms" % timeout)
            msg = sock.recv_multipart()
            received += 1
            out({"frames": [base64.b64encode(f).decode() for f in msg]})
    else:
        sock = ctx.socket(zmq.SUB)
        for topic in cfg["subscribe"]:
            sock.setsockopt(zmq.SUBSCRIBE, base64.b64decode(topic))
        if cfg.get("identity"):
            sock.setsockopt(zmq.IDENTITY, cfg["identity"].encode())
        keepalive(sock)
        sock.setsockopt(zmq.LINGER, 0)
        monitor = sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
        sock.connect(cfg["endpoint"])
        if not monitor.poll(timeout):
            fail("no handshake within %d ms" % timeout)
        recv_monitor_message(monitor)
        out({"connected": True})
        deadline = time.monotonic() + timeout / 1000
        while received < cfg["count"]:
            left = int((deadline - time.monotonic()) * 1000)
            if left <= 0 or not sock.poll(left):
                fail("%d of %d messages within %d ms" % (received, cfg["count"], timeout))
            msg = sock.recv_multipart()
            received += 1
            out({"frames": [base64.b64encode(f).decode() for f in msg]})
    out({"done": received})
    if cfg["mode"] == "sub":
        sock.disable_monitor()
        monitor.close(0)
    sock.close(0)
    ctx.term()


main()
