#!/usr/bin/env python3
"""Cross-check the SigV4 signer against botocore on generated requests.

Builds pseudo-random requests from a fixed seed, signs each one with
botocore's SigV4Auth and with the sigv4-sign tool, and compares the
Authorization values. Prints one "ok" line per batch, or one "not ok" line
per mismatch (the first few, with details on stderr as '#' lines).

Both sides must sign the same bytes, so requests are built like this:
  * botocore gets the query as a list of decoded (name, value) pairs, which
    it encodes itself; the tool gets a query string encoded in one of several
    equivalent ways (upper/lower hex, some characters left raw) and must
    decode and re-encode it to the same canonical form;
  * the path is passed as sent on the wire to both; percent signs in it are
    encoded once more by both (the non-S3 rule);
  * botocore adds X-Amz-Date and, with a token, X-Amz-Security-Token; the
    tool gets X-Amz-Date in the request and the token through --token.

Inputs where the two legitimately differ are not generated:
  * header values with Unicode spaces or the ASCII separators 0x1c-0x1f:
    Python's str.split() treats them as whitespace, the signer trims only
    space, tab, CR, LF, VT and FF;
  * headers botocore never signs (User-Agent, Expect, Connection, ...):
    botocore drops them, the signer signs whatever its caller passes;
  * '?' or '#' in paths, and tab/CR/LF anywhere in the URL: they are URL
    syntax for botocore's urlsplit;
  * a query string handed to botocore inside the URL: botocore then signs it
    verbatim (no decode/re-encode, empty pieces kept), while the signer
    normalises it; botocore only builds already-canonical query strings.
"""

import argparse
import datetime
import random
import subprocess
import sys
import urllib.parse

try:
    import botocore.auth
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
except ImportError:  # the shell script checks this first
    print("# botocore is not installed", file=sys.stderr)
    sys.exit(3)

NAME = "t0100-sigv4"
ACCESS_KEY = "AKIDEXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
SERVICES = ["sagemaker", "eks", "ec2", "logs", "ssm", "servicequotas", "sts", "service"]
REGIONS = ["us-east-1", "us-west-2", "eu-central-1", "ap-southeast-2", "cn-north-1",
           "us-gov-west-1"]
HOSTS = {
    "sagemaker": "api.sagemaker.{r}.amazonaws.com",
    "servicequotas": "servicequotas.{r}.amazonaws.com",
    "service": "example.amazonaws.com",
}
PATH_PIECES = ["clusters", "my-cluster", "a", "b", "x_y", "v1.2", "~tilde", ".", "..", "",
               "%2F", "%20", "%", "%zz", "a b", "caf\u00e9", "\u1234", "\u65e5\u672c",
               "$delete", "!*'()", "a+b", "k=v;p", ":@,", "[x]", "{y}", "|^`", "\"<>\\",
               "%41%7e", "100%", "-._~"]
QUERY_CHARS = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
               "-_.~ !\"$&'()*+,/:;=?@[]^`{|}%#<>\\\u00e9\u1234\u00fc")
HEADER_NAMES = ["X-Custom", "x-amz-meta-note", "Content-Type", "X-Amz-Target", "My-Header1",
                "Accept", "x-amz-client-context", "X-Trace-Me", "Cache-Control"]
VALUE_CHARS = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
               "-_.~!\"#$%&'()*+,/:;<=>?@[\\]^`{|}\u00e9\u00df\u4e2d")
TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="


def rand_text(rng, chars, lo, hi):
    return "".join(rng.choice(chars) for _ in range(rng.randint(lo, hi)))


def rand_case(rng, s):
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in s)


def rand_path(rng):
    if rng.random() < 0.15:
        return "/"
    parts = [rng.choice(PATH_PIECES) for _ in range(rng.randint(1, 6))]
    path = "/" + "/".join(parts)
    if rng.random() < 0.3:
        path += "/"
    if rng.random() < 0.1:
        path = "/" + path
    return path


def encode_query_part(rng, s):
    """Percent-encode s in one of several equivalent spellings."""
    style = rng.random()
    out = []
    for byte in s.encode("utf-8"):
        c = chr(byte)
        raw_ok = c.isalnum() and byte < 128 or c in "-_.~"
        if style > 0.6 and byte < 128 and c in ",:@/!$'()*;":
            raw_ok = True  # sub-delimiters decode to themselves
        if raw_ok and not (style < 0.15 and c in "-_.~"):
            out.append(c)
        elif style < 0.3:
            out.append("%%%02x" % byte)
        else:
            out.append("%%%02X" % byte)
    return "".join(out)


def rand_query(rng):
    pairs = []
    for _ in range(rng.choice([0, 0, 1, 2, 3, 5])):
        if pairs and rng.random() < 0.25:
            name = rng.choice(pairs)[0]  # repeated name
        else:
            name = rand_text(rng, QUERY_CHARS, 1, 8)
        value = "" if rng.random() < 0.2 else rand_text(rng, QUERY_CHARS, 1, 12)
        pairs.append((name, value))
    pieces = []
    for name, value in pairs:
        ename = encode_query_part(rng, name)
        if value == "" and rng.random() < 0.5:
            pieces.append(ename)  # "name" alone means an empty value
        else:
            evalue = encode_query_part(rng, value).replace("%3D", "=") \
                if rng.random() < 0.2 else encode_query_part(rng, value)
            pieces.append(ename + "=" + evalue)
    return pairs, "&".join(pieces)


def rand_value(rng):
    kind = rng.random()
    if kind < 0.1:
        return ""
    words = [rand_text(rng, VALUE_CHARS, 1, 8) for _ in range(rng.randint(1, 4))]
    seps = [rng.choice([" ", "  ", "\t", " \t  ", "   "]) for _ in words[1:]]
    value = words[0] + "".join(s + w for s, w in zip(seps, words[1:]))
    if rng.random() < 0.3:
        value = rng.choice([" ", "  ", "\t"]) + value
    if rng.random() < 0.3:
        value += rng.choice([" ", "   ", "\t"])
    if rng.random() < 0.15:
        value += rng.choice(["\n  ", "\n\t", "\n     "]) + rand_text(rng, VALUE_CHARS, 1, 6)
    return value


def make_case(rng, opts):
    service = rng.choice(SERVICES)
    region = rng.choice(REGIONS)
    host = HOSTS.get(service, "{s}.{r}.amazonaws.com").format(s=service, r=region)
    when = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc) + \
        datetime.timedelta(seconds=rng.randint(0, 37 * 365 * 86400))
    method = rng.choice(["GET", "POST", "POST", "PUT", "DELETE"])
    path = rand_path(rng)
    pairs, query = rand_query(rng)
    while opts.get("query") and not pairs:
        pairs, query = rand_query(rng)
    if opts.get("path_only"):
        pairs, query = [], ""
    headers = [(rand_case(rng, "Host"), host)]
    for _ in range(rng.randint(3 if opts.get("headers") else 0, 8 if opts.get("headers") else 4)):
        if len(headers) > 1 and rng.random() < 0.25:
            name = rand_case(rng, rng.choice(headers[1:])[0])  # repeated name
        else:
            name = rand_case(rng, rng.choice(HEADER_NAMES))
        headers.append((name, rand_value(rng)))
    if rng.random() < 0.05:
        headers.append(("X-Amz-Content-SHA256", "UNSIGNED-PAYLOAD"))
    rng.shuffle(headers)
    body = b""
    if method in ("POST", "PUT") or rng.random() < 0.1:
        body = bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))
        if rng.random() < 0.5:
            body = rand_text(rng, VALUE_CHARS + "{}\n", 0, 120).encode("utf-8")
    token = None
    if opts.get("token") or rng.random() < 0.3:
        token = rand_text(rng, TOKEN_CHARS, 16, 300)
    return {
        "service": service, "region": region, "host": host, "when": when,
        "method": method, "path": path, "pairs": pairs, "query": query,
        "headers": headers, "body": body, "token": token,
    }


class CapturingSigV4(SigV4Auth):
    """SigV4Auth that keeps the canonical request for the diagnostics."""

    last_creq = ""

    def canonical_request(self, request):
        self.last_creq = super().canonical_request(request)
        return self.last_creq


def sign_botocore(case):
    creds = Credentials(ACCESS_KEY, SECRET_KEY, case["token"])
    auth = CapturingSigV4(creds, case["service"], case["region"])
    request = AWSRequest(method=case["method"], url="https://" + case["host"] + case["path"],
                         data=case["body"], params=list(case["pairs"]))
    for name, value in case["headers"]:
        request.headers[name] = value
    frozen = case["when"]
    saved = botocore.auth.get_current_datetime
    botocore.auth.get_current_datetime = lambda: frozen
    try:
        auth.add_auth(request)
    finally:
        botocore.auth.get_current_datetime = saved
    return request.headers["Authorization"], auth.last_creq


def raw_request(case):
    target = case["path"] + ("?" + case["query"] if case["query"] else "")
    lines = ["%s %s HTTP/1.1" % (case["method"], target)]
    for name, value in case["headers"]:
        lines.append("%s:%s" % (name, value))
    lines.append("X-Amz-Date:" + case["when"].strftime("%Y%m%dT%H%M%SZ"))
    return ("\n".join(lines) + "\n\n").encode("utf-8") + case["body"]


def sign_tool(signer, case):
    argv = [signer, "--access-key", ACCESS_KEY, "--secret-key", SECRET_KEY,
            "--region", case["region"], "--service", case["service"],
            "--time", case["when"].strftime("%Y%m%dT%H%M%SZ")]
    if case["token"]:
        argv += ["--token", case["token"]]
    res = subprocess.run(argv, input=raw_request(case), capture_output=True, check=False)
    if res.returncode != 0:
        return None, "exit %d: %s" % (res.returncode, res.stderr.decode("utf-8", "replace"))
    out = res.stdout.decode("utf-8", "replace")
    # Output: creq, blank, four-line string to sign, blank, authorization.
    creq, _, rest = out.rstrip("\n").rpartition("\n\n")
    creq = creq.rpartition("\n\n")[0]
    return rest, creq


BATCHES = [
    ("paths", {"path_only": True}),
    ("queries", {"query": True}),
    ("headers", {"headers": True}),
    ("session tokens", {"token": True}),
    ("mixed", {}),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--signer", required=True)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=20150830)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    per_batch = max(1, args.count // len(BATCHES))
    failed = 0
    for label, opts in BATCHES:
        mismatches = []
        for i in range(per_batch):
            case = make_case(rng, opts)
            want, want_creq = sign_botocore(case)
            got, got_creq = sign_tool(args.signer, case)
            if got != want:
                mismatches.append((i, case, want, got, want_creq, got_creq))
        if not mismatches:
            print("ok - %s: %d generated requests (%s) match botocore" % (NAME, per_batch, label))
            continue
        failed += 1
        for i, case, want, got, want_creq, got_creq in mismatches[:3]:
            print("not ok - %s: generated request %s #%d differs from botocore" % (NAME, label, i))
            detail = ["request: %r" % raw_request(case)[:600],
                      "token: %r" % case["token"],
                      "botocore: %s" % want, "signer:   %s" % got,
                      "botocore canonical request:", want_creq,
                      "signer canonical request:", got_creq]
            for line in "\n".join(detail).split("\n"):
                print("# " + line, file=sys.stderr)
        if len(mismatches) > 3:
            print("not ok - %s: %d more %s mismatches" % (NAME, len(mismatches) - 3, label))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
