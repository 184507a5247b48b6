#!/usr/bin/env python3
"""A fault-injecting HTTP proxy for the end-to-end tests.

Sits on 127.0.0.1 in front of the fixture server (hpnode's AWS_ENDPOINT_URL
points at it) and spoils the replies to chosen calls:

    faultproxy.py --upstream URL --ready-file F [--record F] [--max-seconds N]
                  --fault MODE[@MATCH[@AFTER]] ...

MATCH is an IAM action ("sagemaker:DescribeCluster", "ec2:*", "*"); the
first AFTER matching calls pass untouched. The first rule that matches a
call decides. Modes:

    throttle   the protocol's throttling error (every attempt)
    5xx        HTTP 500 InternalFailure
    truncate   the real reply cut in half (Content-Length kept, then closed)
    badjson    200, the protocol's content type, body '{"Cluster'
    empty      200, the protocol's content type, empty body
    xml        200, text/xml, a well-formed XML document that is not the reply
    html       200, text/html, a login page
    big        200, the protocol's content type, a 50 MB body
    hang       accept the request and never answer (until the client leaves)
    expired    the protocol's ExpiredToken error
    badtoken   the protocol's invalid-token error
    reset      close the connection without a reply

Every request is logged to --record as an "action mode" line (and, for the
replies it passes on, an indented "upstream action status content-type"
line). The proxy stops
itself after --max-seconds. Test-only; never part of hpnode.
"""
import argparse
import http.client
import json
import os
import signal
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

JSON_PREFIXES = {
    "SageMaker": "sagemaker", "Logs_20140328": "logs", "AmazonSSM": "ssm",
    "ServiceQuotasV20190624": "service-quotas",
}
CTYPE = {"json": "application/x-amz-json-1.1", "rest-json": "application/json",
         "ec2": "text/xml;charset=UTF-8", "query": "text/xml"}


def classify(handler, body):
    """(iam action, protocol) of a request."""
    target = handler.headers.get("X-Amz-Target")
    if target and "." in target:
        prefix, op = target.split(".", 1)
        return f"{JSON_PREFIXES.get(prefix, prefix)}:{op}", "json"
    if handler.command == "GET" and handler.path.startswith("/clusters"):
        return "eks:DescribeCluster", "rest-json"
    form = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
    action = form.get("Action", ["?"])[0]
    if form.get("Version", [""])[0] == "2011-06-15":
        return f"sts:{action}", "query"
    return f"ec2:{action}", "ec2"


def error_body(proto, code, message):
    if proto == "ec2":
        return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>{code}'
                f"</Code><Message>{message}</Message></Error></Errors>"
                f"<RequestID>fp-1</RequestID></Response>").encode()
    if proto == "query":
        return (f"<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code>"
                f"<Message>{message}</Message></Error><RequestId>fp-1</RequestId>"
                f"</ErrorResponse>").encode()
    if proto == "rest-json":
        return json.dumps({"message": message}).encode()
    return json.dumps({"__type": code, "message": message}).encode()


THROTTLE = {"ec2": (503, "RequestLimitExceeded"), "query": (400, "Throttling"),
            "rest-json": (429, "ThrottlingException"), "json": (400, "ThrottlingException")}


class Rule:
    def __init__(self, spec):
        parts = spec.split("@")
        self.mode = parts[0]
        self.match = parts[1] if len(parts) > 1 and parts[1] else "*"
        self.after = int(parts[2]) if len(parts) > 2 and parts[2] else 0
        self.seen = 0

    def applies(self, action):
        if self.match == "*":
            hit = True
        elif self.match.endswith(":*"):
            hit = action.startswith(self.match[:-1])
        else:
            hit = action == self.match
        if not hit:
            return False
        self.seen += 1
        return self.seen > self.after


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "faultproxy"

    def log_message(self, *args):
        pass

    def _send(self, status, ctype, body, extra=None):
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _upstream(self, body):
        u = urllib.parse.urlsplit(self.server.upstream)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
        headers["Host"] = self.headers.get("Host", "")
        conn.request(self.command, self.path, body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        hdrs = [(k, v) for k, v in r.getheaders()
                if k.lower() not in ("content-length", "transfer-encoding", "connection")]
        conn.close()
        return r.status, hdrs, data

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        action, proto = classify(self, body)
        mode = "pass"
        with self.server.lock:
            for rule in self.server.rules:
                if rule.applies(action):
                    mode = rule.mode
                    break
            with open(self.server.record, "a") as f:
                f.write(f"{action} {mode}\n")
        if mode == "pass" or mode == "truncate":
            status, hdrs, data = self._upstream(body)
            with self.server.lock, open(self.server.record, "a") as f:
                ctype = [v for k, v in hdrs if k.lower() == "content-type"]
                f.write(f"  upstream {action} {status} {ctype[0] if ctype else '-'}\n")
            self.send_response(status)
            for k, v in hdrs:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if mode == "truncate":
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
            else:
                self.wfile.write(data)
            return
        if mode == "throttle":
            st, code = THROTTLE[proto]
            self._send(st, CTYPE[proto], error_body(proto, code, "Rate exceeded"),
                       {"x-amzn-ErrorType": code} if proto in ("json", "rest-json") else None)
        elif mode == "5xx":
            self._send(500, CTYPE[proto], error_body(proto, "InternalFailure", "internal error"),
                       {"x-amzn-ErrorType": "InternalFailure"} if proto in ("json", "rest-json") else None)
        elif mode == "expired":
            code = "ExpiredToken" if proto in ("ec2", "query") else "ExpiredTokenException"
            self._send(400, CTYPE[proto], error_body(proto, code, "The security token included in the request is expired"),
                       {"x-amzn-ErrorType": code} if proto in ("json", "rest-json") else None)
        elif mode == "badtoken":
            code = "AuthFailure" if proto == "ec2" else ("InvalidClientTokenId" if proto == "query" else "UnrecognizedClientException")
            self._send(403 if proto != "ec2" else 401, CTYPE[proto],
                       error_body(proto, code, "The security token included in the request is invalid"),
                       {"x-amzn-ErrorType": code} if proto in ("json", "rest-json") else None)
        elif mode == "badjson":
            self._send(200, CTYPE[proto], b'{"Cluster')
        elif mode == "empty":
            self._send(200, CTYPE[proto], b"")
        elif mode == "xml":
            self._send(200, "text/xml", b'<?xml version="1.0"?><Status><Ok>true</Ok></Status>')
        elif mode == "html":
            self._send(200, "text/html; charset=utf-8",
                       b"<html><head><title>Sign in</title></head><body><form>Login</form></body></html>")
        elif mode == "big":
            size = 50 << 20
            self.send_response(200)
            self.send_header("Content-Type", CTYPE[proto])
            self.send_header("Content-Length", str(size))
            self.end_headers()
            chunk = b'{"x":"' + b"a" * 65530 + b'"}'
            sent = 0
            try:
                while sent < size:
                    part = chunk[: min(len(chunk), size - sent)]
                    self.wfile.write(part)
                    sent += len(part)
            except OSError:
                pass
        elif mode == "hang":
            # Hold the connection open without answering, until the client
            # gives up (read returns) or the proxy's own limit ends.
            self.connection.settimeout(1.0)
            end = time.monotonic() + self.server.max_seconds
            while time.monotonic() < end:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        break
                except socket.timeout:
                    continue
                except OSError:
                    break
                time.sleep(0.2)
            self.close_connection = True
        elif mode == "reset":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        else:
            self._send(500, "text/plain", f"unknown fault mode {mode}".encode())

    do_GET = do_POST = do_PUT = do_DELETE = handle_any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--ready-file", required=True)
    ap.add_argument("--record", default=os.devnull)
    ap.add_argument("--max-seconds", type=int, default=300)
    ap.add_argument("--fault", action="append", default=[])
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    srv.daemon_threads = True
    srv.upstream = a.upstream
    srv.rules = [Rule(s) for s in a.fault]
    srv.lock = threading.Lock()
    srv.record = a.record
    srv.max_seconds = a.max_seconds
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    threading.Timer(a.max_seconds, lambda: os._exit(0)).start()
    tmp = a.ready_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"http://127.0.0.1:{srv.server_address[1]}\n")
    os.rename(tmp, a.ready_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
