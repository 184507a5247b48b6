"""A deliberately wrong SSM data-channel client, to prove the fixture agent
judges clients strictly (t0520-ssm-strict.sh).

    python3 ssm_wrong_client.py TARGET OUTDIR MISTAKE...

for each MISTAKE in turn, starts an AWS-StartNonInteractiveCommand session
on TARGET through the fixture's StartSession (boto3, the fixture's endpoint
and keys from the environment), speaks the data channel correctly except
for MISTAKE, and writes OUTDIR/MISTAKE.json: the session id, how the
session ended (`closed_output`, the channel_closed Output), the exit code,
stdout, stderr and the HandshakeComplete CustomerMessage.

MISTAKE is one of: none, unswapped_id, nul_type, seconds, ack_wrong_id,
ack_seq, never_ack, no_exit_ack, old_version.
"""

import base64
import hashlib
import json
import os
import socket
import ssl
import struct
import sys
import time
import urllib.parse
import uuid

HEADER = struct.Struct(">I32sIQqQ16s32sII")
MISTAKES = ("none", "unswapped_id", "nul_type", "seconds", "ack_wrong_id", "ack_seq",
            "never_ack", "no_exit_ack", "old_version")
COMMAND = "sh -c 'echo hello from the node; echo careful >&2; exit 3'"
LIMIT_S = 30


def message_id(mistake):
    """A v4 UUID; for unswapped_id, one whose halves read swapped back are not v4."""
    while True:
        u = uuid.uuid4()
        if mistake != "unswapped_id":
            return u
        back = uuid.UUID(bytes=u.bytes[8:] + u.bytes[:8])
        if back.version != 4 or back.variant != uuid.RFC_4122:
            return u


def encode(mistake, mtype, seq, flags, ptype, payload):
    mid = message_id(mistake)
    raw = mid.bytes if mistake == "unswapped_id" else mid.bytes[8:] + mid.bytes[:8]
    pad = b"\x00" if mistake == "nul_type" else b" "
    created = int(time.time()) if mistake == "seconds" else int(time.time() * 1000)
    return HEADER.pack(116, mtype.encode().ljust(32, pad), 1, created, seq, flags, raw,
                       hashlib.sha256(payload).digest(), ptype, len(payload)) + payload


def decode(data):
    hl = struct.unpack(">I", data[:4])[0]
    mtype = data[4:36].strip(b" \x00").decode()
    _schema, _created, seq, flags = struct.unpack(">IQqQ", data[36:64])
    idf = data[64:80]
    ptype = struct.unpack(">I", data[112:116])[0]
    payload = data[hl + 4:]
    if hashlib.sha256(payload).digest() != data[80:112]:
        return None
    return {"type": mtype, "seq": seq, "ptype": ptype, "payload": payload,
            "id": str(uuid.UUID(bytes=idf[8:] + idf[:8]))}


class Socket:
    def __init__(self, url, ca):
        u = urllib.parse.urlsplit(url)
        ctx = ssl.create_default_context(cafile=ca)
        raw = socket.create_connection((u.hostname, u.port or 443), timeout=LIMIT_S)
        self.sock = ctx.wrap_socket(raw, server_hostname=u.hostname)
        key = base64.b64encode(os.urandom(16)).decode()
        path = u.path + ("?" + u.query if u.query else "")
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {u.netloc}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise SystemExit("upgrade refused")
            self.buf += chunk
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise SystemExit("upgrade refused: " + head.decode("latin-1"))

    def send(self, opcode, data):
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
        else:
            head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(head + mask + body)

    def _need(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk

    def receive(self):
        """Next data message (bytes); pings answered; None on close."""
        while True:
            self._need(2)
            opcode, n = self.buf[0] & 0x0F, self.buf[1] & 0x7F
            pos = 2
            if n == 126:
                self._need(4)
                n, pos = int.from_bytes(self.buf[2:4], "big"), 4
            elif n == 127:
                self._need(10)
                n, pos = int.from_bytes(self.buf[2:10], "big"), 10
            self._need(pos + n)
            data, self.buf = self.buf[pos:pos + n], self.buf[pos + n:]
            if opcode == 9:
                self.send(10, data)
            elif opcode == 8:
                return None
            elif opcode in (1, 2):
                return data


def session(ssm, target, mistake):
    started = ssm.start_session(Target=target, DocumentName="AWS-StartNonInteractiveCommand",
                                Parameters={"command": [COMMAND],
                                            "separateOutputStream": ["true"]})
    ws = Socket(started["StreamUrl"], os.environ["AWS_CA_BUNDLE"])
    ws.send(1, json.dumps({"MessageSchemaVersion": "1.0", "RequestId": str(uuid.uuid4()),
                           "TokenValue": started["TokenValue"], "ClientId": str(uuid.uuid4()),
                           "ClientVersion": "1.2.650.0"}).encode())
    result = {"mistake": mistake, "session_id": started["SessionId"], "closed_output": None, "exit_code": None, "stdout": "",
              "stderr": "", "customer_message": None}
    expected, out_seq = 0, 0
    deadline = time.monotonic() + LIMIT_S
    ws.sock.settimeout(LIMIT_S)
    while time.monotonic() < deadline:
        try:
            data = ws.receive()
        except (EOFError, OSError):
            data = None
        if data is None:
            result["socket_closed"] = True
            break
        m = decode(data)
        if m is None:
            continue
        if m["type"] == "channel_closed":
            result["closed_output"] = json.loads(m["payload"]).get("Output")
            break
        if m["type"] != "output_stream_data":
            continue
        skip = mistake == "never_ack" or (mistake == "no_exit_ack" and m["ptype"] == 12)
        if not skip:
            ack = {"AcknowledgedMessageType": m["type"],
                   "AcknowledgedMessageId": str(uuid.uuid4()) if mistake == "ack_wrong_id"
                   else m["id"],
                   "AcknowledgedMessageSequenceNumber": m["seq"], "IsSequentialMessage": True}
            try:
                ws.send(2, encode(mistake, "acknowledge", m["seq"] if mistake == "ack_seq" else 0,
                                  3, 0, json.dumps(ack).encode()))
            except OSError:
                # The agent may close the channel while this client is still sending (it
                # ends the session on the violation): the same outcome as a close read.
                result["socket_closed"] = True
                break
        if m["seq"] != expected:
            continue
        expected += 1
        if m["ptype"] == 5:
            req = json.loads(m["payload"])
            rows = [{"ActionType": a["ActionType"],
                     "ActionStatus": 1 if a["ActionType"] == "SessionType" else 3,
                     "ActionResult": None, "Error": ""}
                    for a in req["RequestedClientActions"]]
            resp = {"ClientVersion": "1.2.200.0" if mistake == "old_version" else "1.2.650.0",
                    "ProcessedClientActions": rows, "Errors": None}
            try:
                ws.send(2, encode(mistake, "input_stream_data", out_seq, 0, 6,
                                  json.dumps(resp).encode()))
            except OSError:
                result["socket_closed"] = True
                break
            out_seq += 1
        elif m["ptype"] == 7:
            result["customer_message"] = json.loads(m["payload"]).get("CustomerMessage")
        elif m["ptype"] == 1:
            result["stdout"] += m["payload"].decode("utf-8", "replace")
        elif m["ptype"] == 11:
            result["stderr"] += m["payload"].decode("utf-8", "replace")
        elif m["ptype"] == 12:
            text = m["payload"].decode()
            result["exit_code"] = int(text.split(":", 1)[1])
    try:
        ws.send(8, (1000).to_bytes(2, "big"))
        ws.sock.close()
    except OSError:
        pass
    return result


def main():
    target, outdir, mistakes = sys.argv[1], sys.argv[2], sys.argv[3:]
    for mistake in mistakes:
        if mistake not in MISTAKES:
            raise SystemExit(f"unknown mistake {mistake}")
    import boto3  # the fixture's own dependency
    ssm = boto3.client("ssm", endpoint_url=os.environ["AWS_ENDPOINT_URL"],
                       region_name=os.environ["AWS_REGION"])
    for mistake in mistakes:
        result = session(ssm, target, mistake)
        with open(os.path.join(outdir, mistake + ".json"), "w", encoding="utf-8") as fh:
            json.dump(result, fh)


if __name__ == "__main__":
    main()
