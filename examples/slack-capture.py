#!/usr/bin/env python3
"""A local stand-in for Slack's Web API, to see what brine's Slack audit posts
without a workspace: answers chat.postMessage and chat.update like Slack and
appends each message to a JSON-lines file (the token is not written).

    python3 examples/slack-capture.py 8089 /tmp/slack.jsonl &

and in the master configuration:

    slack:
      token: xoxb-local-capture
      channel: '#infra'
      api_url: http://127.0.0.1:8089/api/
"""
import http.server
import itertools
import json
import sys
import urllib.parse

out, n = open(sys.argv[2], "a"), itertools.count(1)


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        form = {k: v[0] for k, v in urllib.parse.parse_qs(body).items()}
        form.pop("token", None)
        method = self.path.rsplit("/", 1)[-1]
        ts = form.get("ts") or "1700000000.%06d" % next(n)
        out.write(json.dumps({"method": method, "channel": form.get("channel"), "thread_ts": form.get("thread_ts"),
                              "ts": ts, "text": form.get("text"), "attachments": form.get("attachments")}) + "\n")
        out.flush()
        reply = json.dumps({"ok": True, "channel": "C0LOCAL", "ts": ts}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
