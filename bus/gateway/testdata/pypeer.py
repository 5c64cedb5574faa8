"""A libzmq peer (pyzmq) of the gateway, for interop_test.go.

Reads one JSON object from stdin:
  mode        "dealer" (the request endpoint) or "sub" (the publish endpoint)
  endpoint    where to connect
  server_key  the master's public key (Z85)
  public,
  secret      this peer's CURVE key pair (Z85); absent, a fresh pair is made
              with zmq.curve_keypair()
  requests    dealer: requests to send in turn, each a list of base64 frames
              whose first is the correlation id; after each, messages are
              read until the one carrying that correlation id (pushes, whose
              first frame is empty, may come before it)
  subscribe   sub: the prefix to subscribe to
  count       sub: stop after this many messages
  timeout_ms  dealer: how long to wait for each message; sub: how long to
              wait for all of them

Writes JSON lines to stdout: {"public": KEY} first, then {"frames": [base64…]}
for every message received, then, for a sub, {"monitor": [names…]}: the
socket's events as libzmq's monitor reported them (CONNECTED,
HANDSHAKE_SUCCEEDED, DISCONNECTED…), and last {"done": N} (the number of
messages received). Exits 1 with the reason on stderr when a dealer's reply
does not come.
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


def frames_of(msg):
    return [base64.b64encode(f).decode() for f in msg]


def main():
    cfg = json.loads(sys.stdin.readline())
    if cfg.get("secret"):
        public, secret = cfg["public"].encode(), cfg["secret"].encode()
    else:
        public, secret = zmq.curve_keypair()
    out({"public": public.decode()})
    timeout = cfg["timeout_ms"]

    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER if cfg["mode"] == "dealer" else zmq.SUB)
    sock.linger = 0
    sock.curve_secretkey = secret
    sock.curve_publickey = public
    sock.curve_serverkey = cfg["server_key"].encode()
    received = 0
    try:
        if cfg["mode"] == "dealer":
            sock.connect(cfg["endpoint"])
            for req in cfg["requests"]:
                frames = [base64.b64decode(f) for f in req]
                sock.send_multipart(frames)
                while True:
                    if not sock.poll(timeout):
                        fail("no reply to request %r within %d ms" % (frames[0], timeout))
                    msg = sock.recv_multipart()
                    received += 1
                    out({"frames": frames_of(msg)})
                    if msg[0] == frames[0]:
                        break
        else:
            monitor = sock.get_monitor_socket()
            events = []
            sock.setsockopt(zmq.SUBSCRIBE, cfg["subscribe"].encode())
            sock.connect(cfg["endpoint"])
            poller = zmq.Poller()
            poller.register(sock, zmq.POLLIN)
            poller.register(monitor, zmq.POLLIN)
            deadline = time.monotonic() + timeout / 1000
            while received < cfg["count"]:
                left = int((deadline - time.monotonic()) * 1000)
                if left <= 0:
                    break
                ready = dict(poller.poll(left))
                if monitor in ready:
                    events.append(zmq.Event(recv_monitor_message(monitor)["event"]).name)
                if sock in ready:
                    out({"frames": frames_of(sock.recv_multipart())})
                    received += 1
            while monitor.poll(0):
                events.append(zmq.Event(recv_monitor_message(monitor)["event"]).name)
            out({"monitor": events})
            sock.disable_monitor()
            monitor.close()
        out({"done": received})
    finally:
        sock.close()
        ctx.term()


if __name__ == "__main__":
    main()
