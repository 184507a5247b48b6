#!/usr/bin/env python3
"""Differential test of credential, profile, region and endpoint resolution.

A seeded generator writes configurations (config and credentials files,
environment variables, flags, SSO token caches, web-identity token files,
credential_process scripts). Each one is resolved twice against one loopback
server: by botocore, with the AWS CLI v2's documented precedence applied on
top (--profile > AWS_PROFILE > AWS_DEFAULT_PROFILE; --region > AWS_REGION >
AWS_DEFAULT_REGION > profile; empty variables unset), calling
sts:GetCallerIdentity and ec2:DescribeSecurityGroups; and by `hpnode efa-sg`,
which makes the same two calls. The server mints every STS, SSO and OIDC
answer from its inputs (caller key, role, session name, token), so the key id
a call is signed with names the whole chain that produced it. What is
compared is what each side signed with: access key id, credential scope
(region, service) and the request path (which says which endpoint setting
won). A case where botocore would leave the loopback is not run.

Differences hpnode keeps on purpose (README, "AWS configuration") are
classified first; in those cases hpnode must fail without signing anything.
Any other disagreement fails the test.

usage: creds_diff.py HPNODE WORKDIR [--seed N] [--count N] [--show N]
"""
import argparse
import hashlib
import http.server
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import urllib.parse
from datetime import datetime, timedelta, timezone

ap = argparse.ArgumentParser()
ap.add_argument("hpnode")
ap.add_argument("work")
ap.add_argument("--seed", type=int, default=22)
ap.add_argument("--count", type=int, default=320)
ap.add_argument("--show", type=int, default=8, help="disagreements to print in full")
args = ap.parse_args()

WORK = os.path.abspath(args.work)
HOME = os.path.join(WORK, "home")
os.makedirs(os.path.join(HOME, ".aws", "sso", "cache"), exist_ok=True)
# botocore fixes its SSO cache directory from HOME when it is imported.
os.environ["HOME"] = HOME
try:
    import botocore.session
    import botocore.loaders
    import botocore.httpsession
    from botocore.config import Config
except ImportError:
    print("SKIP botocore not installed")
    sys.exit(77)


def kid(*parts):
    return "ASIA" + hashlib.sha1("|".join(parts).encode()).hexdigest()[:16].upper()


def session_name(n):
    # Each side picks its own default session name; both mean "not configured".
    if n.startswith("botocore-session-") or n.startswith("hpnode-session-"):
        return "DEFAULT"
    return n


# ---- the loopback server ----

RECORDS = []
LOCK = threading.Lock()
FAR = "2099-01-01T00:00:00Z"


def sts_xml(action, akid):
    return ('<%sResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><%sResult>'
            '<Credentials><AccessKeyId>%s</AccessKeyId><SecretAccessKey>s-%s</SecretAccessKey>'
            '<SessionToken>t-%s</SessionToken><Expiration>%s</Expiration></Credentials>'
            '<AssumedRoleUser><AssumedRoleId>AROAX:s</AssumedRoleId>'
            '<Arn>arn:aws:sts::111122223333:assumed-role/r/s</Arn></AssumedRoleUser>'
            '</%sResult><ResponseMetadata><RequestId>r1</RequestId></ResponseMetadata>'
            '</%sResponse>' % (action, action, akid, akid, akid, FAR, action, action))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, status, body, ctype):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.handle_any(b"")

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.handle_any(self.rfile.read(n))

    def handle_any(self, body):
        url = urllib.parse.urlsplit(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query)
        authz = self.headers.get("Authorization") or ""
        ak = region = service = None
        if "Credential=" in authz:
            scope = authz.split("Credential=", 1)[1].split(",", 1)[0].split("/")
            if len(scope) >= 5:
                ak, region, service = scope[0], scope[2], scope[3]
        form = {}
        if self.command == "POST" and b"=" in body and not body.startswith(b"{"):
            form = {k: v[0] for k, v in urllib.parse.parse_qs(body.decode()).items()}
        action = form.get("Action", "")
        if action == "AssumeRole":
            k = kid("role", ak or "-", form.get("RoleArn", ""),
                    session_name(form.get("RoleSessionName", "")), form.get("ExternalId", ""))
            return self.reply(200, sts_xml("AssumeRole", k), "text/xml")
        if action == "AssumeRoleWithWebIdentity":
            k = kid("web", form.get("RoleArn", ""), session_name(form.get("RoleSessionName", "")),
                    form.get("WebIdentityToken", ""))
            return self.reply(200, sts_xml("AssumeRoleWithWebIdentity", k), "text/xml")
        if path.endswith("/federation/credentials"):
            tok = self.headers.get("x-amz-sso_bearer_token") or ""
            k = kid("sso", tok, query.get("account_id", [""])[0], query.get("role_name", [""])[0])
            return self.reply(200, json.dumps({"roleCredentials": {
                "accessKeyId": k, "secretAccessKey": "s-" + k, "sessionToken": "t-" + k,
                "expiration": 4070908800000}}), "application/json")
        if "/container/" in path:
            k = kid("container", path.rsplit("/", 1)[1], self.headers.get("Authorization") or "")
            return self.reply(200, json.dumps({"AccessKeyId": k, "SecretAccessKey": "s-" + k,
                                               "Token": "t-" + k, "Expiration": FAR}),
                              "application/json")
        if path.endswith("/token"):
            j = json.loads(body or b"{}")
            rt = j.get("refreshToken", "")
            if "bad" in rt:
                return self.reply(400, json.dumps({"error": "invalid_grant"}), "application/json")
            return self.reply(200, json.dumps({
                "accessToken": "tok-from-" + rt, "expiresIn": 3600, "tokenType": "Bearer",
                "refreshToken": rt + "-2"}), "application/json")
        if action in ("GetCallerIdentity", "DescribeSecurityGroups"):
            with LOCK:
                RECORDS.append((action, ak, region, service, path))
        if action == "GetCallerIdentity":
            return self.reply(200, '<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/'
                              'doc/2011-06-15/"><GetCallerIdentityResult><Arn>arn:aws:iam::'
                              '111122223333:user/u</Arn><UserId>AIDAX</UserId><Account>'
                              '111122223333</Account></GetCallerIdentityResult><ResponseMetadata>'
                              '<RequestId>r2</RequestId></ResponseMetadata>'
                              '</GetCallerIdentityResponse>', "text/xml")
        return self.reply(200, '<DescribeSecurityGroupsResponse xmlns="http://ec2.amazonaws.com/'
                          'doc/2016-11-15/"><requestId>r3</requestId><securityGroupInfo/>'
                          '</DescribeSecurityGroupsResponse>', "text/xml")


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
BASE = "http://127.0.0.1:%d" % server.server_address[1]

# ---- the generator ----

PROFILES = ["default", "dev", "ops", "base", "ci"]
REGIONS = ["us-west-2", "eu-west-1", "ap-south-1", "us-east-1", "ca-central-1"]
ROLE = "arn:aws:iam::111122223333:role/"
SCRIPT = os.path.join(WORK, "proc.sh")
with open(SCRIPT, "w") as f:
    f.write('#!/bin/sh\nprintf \'{"Version": 1, "AccessKeyId": "%s", '
            '"SecretAccessKey": "s-%s"}\' "$1" "$1"\n')
os.chmod(SCRIPT, 0o755)


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


class Case:
    def __init__(self, n, rnd):
        self.n = n
        self.r = rnd
        self.env = {}
        self.flags = {}
        self.config = {}      # section -> list of (key, value); value None = sub-key block
        self.creds = {}
        self.tokens = {}      # file -> text
        self.sso_cache = {}   # cache key (session name or start URL) -> dict
        self.eol = ("\n", "\n")
        self.style = 0
        self.tags = []

    def cfg_section(self, name):
        return "default" if name == "default" else "profile " + name

    def put(self, prof, key, value, where="config"):
        if where == "creds":
            self.creds.setdefault(prof, []).append((key, value))
        else:
            self.config.setdefault(self.cfg_section(prof), []).append((key, value))

    def has(self, prof, key):
        return any(k == key for k, _ in self.config.get(self.cfg_section(prof), [])) or \
            any(k == key for k, _ in self.creds.get(prof, []))


def render(sections, eol, style=0):
    """INI text; style varies the spelling: delimiters, comments, header blanks, key case."""
    delim = [" = ", "=", " : ", " =  "][style % 4]
    out = []
    for name, kvs in sections.items():
        if style & 4:
            out.append("# %s" % name)
        # "[ profile ci ]" names no profile for botocore (nor for hpnode).
        out.append("[ %s ]" % name if style & 8 and name == "profile ci" else "[%s]" % name)
        seen = set()
        for k, v in kvs:
            if k in seen:
                continue
            seen.add(k)
            if style & 16 and k.startswith("aws_"):
                k = k.upper()  # option names are case-insensitive
            if isinstance(v, list):
                out.append("%s%s" % (k, delim.rstrip()))
                # Sub-keys take "=" only (botocore and hpnode refuse ":" there).
                sub = " = " if ":" in delim and style != 18 else delim
                out.extend("  %s%s%s" % (kk, sub, vv) for kk, vv in v)
            else:
                out.append("%s%s%s" % (k, delim, v))
            if style & 4:
                out.append("; after %s" % k)
        if style & 4:
            out.append("")
    return eol.join(out) + eol


def ep(tag, slash=None):
    return "%s/%s%s" % (BASE, tag, "/" if slash else "")


def add_profile(c, prof, kind):
    r = c.r
    where = lambda: "creds" if r.random() < 0.3 else "config"   # noqa: E731
    if kind == "static-creds":
        c.put(prof, "aws_access_key_id", "AKIACRED" + prof.upper(), "creds")
        c.put(prof, "aws_secret_access_key", "sk-cred-" + prof, "creds")
    elif kind == "static-config":
        c.put(prof, "aws_access_key_id", "AKIACFG" + prof.upper())
        c.put(prof, "aws_secret_access_key", "sk-cfg-" + prof)
    elif kind == "static-both":
        add_profile(c, prof, "static-creds")
        add_profile(c, prof, "static-config")
    elif kind in ("role", "role-keys"):
        w = where()
        c.put(prof, "role_arn", ROLE + "r-" + prof, w)
        src = r.choice(PROFILES)
        c.put(prof, "source_profile", src, where())
        if r.random() < 0.3:
            c.put(prof, "role_session_name", "sess-" + prof, where())
        if r.random() < 0.2:
            c.put(prof, "external_id", "ext-" + prof)
        if kind == "role-keys":
            add_profile(c, prof, r.choice(["static-creds", "static-config"]))
    elif kind == "credsource":
        c.put(prof, "role_arn", ROLE + "cs-" + prof, where())
        c.put(prof, "credential_source", "Environment")
    elif kind == "webid":
        path = os.path.join(WORK, "tok-" + prof)
        c.tokens[path] = "webtok-%s-%d" % (prof, c.n)
        c.put(prof, "web_identity_token_file", path, where())
        c.put(prof, "role_arn", ROLE + "w-" + prof, where())
        if r.random() < 0.4:
            c.put(prof, "role_session_name", "wsess-" + prof)
    elif kind in ("sso-legacy", "sso-session"):
        acct = r.choice(["111122223333", "444455556666"])
        c.put(prof, "sso_account_id", acct, where())
        c.put(prof, "sso_role_name", "Role" + prof, where())
        if kind == "sso-legacy":
            url = "https://legacy-%s.example/start" % prof
            c.put(prof, "sso_start_url", url)
            c.put(prof, "sso_region", "us-east-1")
            add_token(c, url, legacy=True)
        else:
            sess = r.choice(["corp", "lab"])
            c.put(prof, "sso_session", sess)
            c.config["sso-session " + sess] = [
                ("sso_start_url", "https://%s.example/start" % sess),
                ("sso_region", "us-east-1"),
                ("sso_registration_scopes", "sso:account:access")]
            if r.random() < 0.1:
                # Set in both with another value: botocore refuses it.
                c.put(prof, "sso_region", "eu-west-1")
            add_token(c, sess, legacy=False)
    elif kind == "sso-incomplete":
        # Only the session or only a start URL: not an SSO profile for botocore.
        if r.random() < 0.5:
            c.put(prof, "sso_session", "corp")
            c.config["sso-session corp"] = [("sso_start_url", "https://corp.example/start"),
                                            ("sso_region", "us-east-1")]
        else:
            c.put(prof, "sso_start_url", "https://only.example/start")
            c.put(prof, "sso_region", "us-east-1")
        if r.random() < 0.7:
            add_profile(c, prof, "static-creds")
    elif kind == "process":
        c.put(prof, "credential_process", "%s AKIAPROC%s" % (SCRIPT, prof.upper()), where())
    elif kind == "region-only":
        c.put(prof, "region", r.choice(REGIONS))


def add_token(c, key, legacy):
    r = c.r
    if key in c.sso_cache or r.random() < 0.05:
        return
    now = datetime.now(timezone.utc)
    state = r.choice(["valid", "valid", "last-minute", "window", "window-bad", "expired",
                      "expired-refresh"])
    left = {"valid": timedelta(hours=2), "last-minute": timedelta(seconds=40),
            "window": timedelta(minutes=10), "window-bad": timedelta(minutes=10),
            "expired": timedelta(hours=-1), "expired-refresh": timedelta(hours=-1)}[state]
    d = {"startUrl": "https://%s.example/start" % key, "region": "us-east-1",
         "accessToken": "tok-%s-%d" % (hashlib.sha1(key.encode()).hexdigest()[:6], c.n),
         "expiresAt": iso(now + left)}
    if state in ("window", "window-bad", "expired-refresh", "last-minute") and not legacy:
        d.update({"clientId": "cid", "clientSecret": "csec",
                  "registrationExpiresAt": FAR,
                  "refreshToken": "rt-%s%d" % ("bad-" if state == "window-bad" else "", c.n)})
    c.sso_cache[key] = d
    c.tags.append("sso-" + state)


KINDS = ["static-creds", "static-config", "static-both", "role", "role-keys", "credsource",
         "webid", "sso-legacy", "sso-session", "sso-incomplete", "process", "region-only", None]


def generate(n, rnd, corner=None):
    c = Case(n, rnd)
    r = rnd
    for prof in PROFILES:
        kind = r.choice(KINDS)
        if kind:
            add_profile(c, prof, kind)
        if r.random() < 0.5:
            c.put(prof, "region", r.choice(REGIONS), "creds" if r.random() < 0.3 else "config")
    # Profile selection.
    x = r.random()
    if x < 0.2:
        c.flags["profile"] = r.choice(PROFILES)
    if r.random() < 0.45:
        c.env["AWS_PROFILE"] = r.choice(PROFILES + [""])
    if r.random() < 0.45:
        c.env["AWS_DEFAULT_PROFILE"] = r.choice(PROFILES + [""])
    # Region.
    if r.random() < 0.15:
        c.flags["region"] = r.choice(REGIONS)
    if r.random() < 0.35:
        c.env["AWS_REGION"] = r.choice(REGIONS + [""])
    if r.random() < 0.45:
        c.env["AWS_DEFAULT_REGION"] = r.choice(REGIONS)
    # Environment credentials.
    x = r.random()
    if x < 0.25:
        c.env["AWS_ACCESS_KEY_ID"] = "AKIAENVKEY"
        c.env["AWS_SECRET_ACCESS_KEY"] = "sk-env"
    elif x < 0.28:
        c.env["AWS_SECRET_ACCESS_KEY"] = "sk-env-alone"
    if r.random() < 0.15:
        path = os.path.join(WORK, "tok-env")
        c.tokens[path] = "webtok-env-%d" % n
        c.env["AWS_WEB_IDENTITY_TOKEN_FILE"] = path
        if r.random() < 0.85:
            c.env["AWS_ROLE_ARN"] = ROLE + "envweb"
    elif r.random() < 0.03:
        c.env["AWS_ROLE_ARN"] = ROLE + "envweb"
    if r.random() < 0.1:
        c.env["AWS_ROLE_SESSION_NAME"] = "envsess"
    # Endpoints: each setting has its own path prefix, so the path tells which won.
    if r.random() < 0.7:
        c.env["AWS_ENDPOINT_URL"] = ep("env-global", r.random() < 0.3)
    if r.random() < 0.2:
        c.env["AWS_ENDPOINT_URL_EC2"] = ep("env-ec2", r.random() < 0.3)
    if r.random() < 0.15:
        c.env["AWS_ENDPOINT_URL_STS"] = ep("env-sts")
    if r.random() < 0.15:
        c.env["AWS_ENDPOINT_URL_SSO"] = ep("env-sso")
    if r.random() < 0.1:
        c.flags["endpoint"] = ep("flag", r.random() < 0.3)
    for prof in PROFILES:
        if r.random() < 0.15:
            c.put(prof, "endpoint_url", ep("prof-" + prof, r.random() < 0.3))
        if r.random() < 0.2:
            grp = "svc-" + prof
            c.put(prof, "services", grp if r.random() < 0.9 else "missing-" + prof)
            subs = []
            for svc in ("ec2", "sts", "sso", "sso_oidc"):
                if r.random() < 0.6:
                    subs.append((svc, [("endpoint_url", ep("%s-%s" % (grp, svc),
                                                            r.random() < 0.3))]))
            c.config["services " + grp] = subs or [("ec2", [("endpoint_url", ep(grp + "-ec2"))])]
    if r.random() < 0.04:
        c.env["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] = "true"
    # File format corners.
    c.eol = (r.choice(["\n"] * 6 + ["\r\n", "\r"]), r.choice(["\n"] * 6 + ["\r\n", "\r"]))
    c.paths = (r.choice(["abs", "abs", "$HOME", "${HOME}", "~"]),
               r.choice(["abs", "abs", "$HOME", "${HOME}", "~"]))
    c.style = r.randrange(32)
    # Container credentials on the loopback (EKS Pod Identity, ECS).
    if r.random() < 0.08:
        c.env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = ep("container/%d" % n)
        if r.random() < 0.5:
            c.env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "ctok-%d" % n
    if corner:
        corner(c)
    return c


# Hand-made corners, each layered over a random base.
def corner_profile_order(c):
    c.flags.pop("profile", None)
    c.env["AWS_PROFILE"], c.env["AWS_DEFAULT_PROFILE"] = "dev", "ops"
    for p in ("dev", "ops"):
        c.config.pop(c.cfg_section(p), None)
        c.creds.pop(p, None)
        add_profile(c, p, "static-creds")
    c.env.pop("AWS_ACCESS_KEY_ID", None)
    c.env.pop("AWS_SECRET_ACCESS_KEY", None)


def corner_region_order(c):
    c.flags.pop("region", None)
    c.env["AWS_REGION"], c.env["AWS_DEFAULT_REGION"] = "eu-west-1", "ap-south-1"


def corner_source_keys_and_role(c):
    c.flags["profile"] = "ops"
    for p in ("ops", "base"):
        c.config.pop(c.cfg_section(p), None)
        c.creds.pop(p, None)
    c.put("ops", "role_arn", ROLE + "ops")
    c.put("ops", "source_profile", "base")
    c.put("base", "role_arn", ROLE + "base")
    c.put("base", "source_profile", "dev")
    add_profile(c, "base", "static-creds")


def corner_webid_env(c):
    c.flags.pop("profile", None)
    c.env.pop("AWS_ACCESS_KEY_ID", None)
    c.env.pop("AWS_SECRET_ACCESS_KEY", None)
    c.env["AWS_PROFILE"] = "ci"
    c.config.pop(c.cfg_section("ci"), None)
    c.creds.pop("ci", None)
    add_profile(c, "ci", "webid")
    path = os.path.join(WORK, "tok-env")
    c.tokens[path] = "webtok-env-%d" % c.n
    which = c.n % 3
    if which == 0:
        c.env["AWS_WEB_IDENTITY_TOKEN_FILE"] = path
    elif which == 1:
        c.env["AWS_ROLE_ARN"] = ROLE + "envweb"
    c.env["AWS_ROLE_SESSION_NAME"] = "envsess"


def corner_sso_incomplete(c):
    c.flags["profile"] = "dev"
    c.config.pop(c.cfg_section("dev"), None)
    c.creds.pop("dev", None)
    add_profile(c, "dev", "sso-incomplete")
    add_profile(c, "dev", "static-creds")


def corner_services(c):
    c.env.pop("AWS_ENDPOINT_URL", None)
    c.env.pop("AWS_ENDPOINT_URL_EC2", None)
    c.env.pop("AWS_ENDPOINT_URL_SSO", None)
    c.env.pop("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", None)
    c.flags.pop("endpoint", None)
    c.flags["profile"] = "ci"
    c.config.pop(c.cfg_section("ci"), None)
    c.creds.pop("ci", None)
    add_profile(c, "ci", "sso-session" if c.n % 2 else "static-config")
    c.put("ci", "region", "us-west-2")
    c.put("ci", "services", "local" if c.n % 4 != 3 else "nowhere")
    c.config["services local"] = [(s, [("endpoint_url", ep("local-" + s, c.n % 3 == 0))])
                                  for s in ("ec2", "sts", "sso", "sso_oidc")]


def corner_sso_last_minute(c):
    corner_services(c)
    c.config.pop(c.cfg_section("ci"), None)
    c.put("ci", "region", "us-west-2")
    c.put("ci", "services", "local")
    add_profile(c, "ci", "sso-legacy" if c.n % 2 else "sso-session")
    for d in c.sso_cache.values():
        d["expiresAt"] = iso(datetime.now(timezone.utc) + timedelta(seconds=40))


def corner_files(c):
    c.eol = (["\r", "\r\n", "\r"][c.n % 3], ["\r", "\n", "\r\n"][c.n % 3])
    c.paths = (["$HOME", "~", "${HOME}"][c.n % 3], ["~", "${HOME}", "$HOME"][c.n % 3])
    c.env["AWS_ENDPOINT_URL_EC2"] = ep("prefix/deeper", True)


def corner_creds_file_settings(c):
    c.flags["profile"] = "ops"
    c.env.pop("AWS_REGION", None)
    c.env.pop("AWS_DEFAULT_REGION", None)
    c.flags.pop("region", None)
    for p in ("ops", "base"):
        c.config.pop(c.cfg_section(p), None)
        c.creds.pop(p, None)
    c.put("ops", "region", "eu-west-1")
    c.put("ops", "region", "ap-south-1", "creds")
    kind = c.n % 3
    if kind == 0:
        c.put("ops", "role_arn", ROLE + "ops", "creds")
        c.put("ops", "source_profile", "base", "creds")
        add_profile(c, "base", "static-config")
    elif kind == 1:
        c.put("ops", "credential_process", "%s AKIAPROCCRED" % SCRIPT, "creds")
    else:
        c.put("ops", "aws_access_key_id", "AKIACFGOPS")
        c.put("ops", "aws_secret_access_key", "sk")


CORNERS = [corner_profile_order, corner_region_order, corner_source_keys_and_role,
           corner_webid_env, corner_sso_incomplete, corner_services, corner_sso_last_minute,
           corner_files, corner_creds_file_settings]


# ---- running one case ----

def nonempty_env(env):
    return {k: v for k, v in env.items() if v != ""}


def write_case(c):
    cfg_dir = os.path.join(HOME, "conf")
    shutil.rmtree(cfg_dir, ignore_errors=True)
    os.makedirs(cfg_dir)
    cache = os.path.join(HOME, ".aws", "sso", "cache")
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(cache)
    files = {}
    for i, (leaf, sections) in enumerate((("config", c.config), ("credentials", c.creds))):
        path = os.path.join(cfg_dir, leaf)
        with open(path, "w", newline="") as f:
            f.write(render(sections, c.eol[i], c.style))
        form = c.paths[i]
        files[i] = {"abs": path, "$HOME": "$HOME/conf/" + leaf, "${HOME}": "${HOME}/conf/" + leaf,
                    "~": "~/conf/" + leaf}[form]
    c.env["AWS_CONFIG_FILE"] = files[0]
    c.env["AWS_SHARED_CREDENTIALS_FILE"] = files[1]
    for path, text in c.tokens.items():
        with open(path, "w") as f:
            f.write(text)
    for key, d in c.sso_cache.items():
        name = hashlib.sha1(key.encode()).hexdigest() + ".json"
        with open(os.path.join(cache, name), "w") as f:
            json.dump(d, f)


def base_env():
    return {"HOME": HOME, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C",
            "TZ": "UTC", "AWS_EC2_METADATA_DISABLED": "true",
            # Belt and braces: anything not bound for the loopback dies at a dead proxy.
            "HTTPS_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9",
            "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1", "AWS_MAX_ATTEMPTS": "1"}


LEFT_LOOPBACK = []
_orig_send = botocore.httpsession.URLLib3Session.send


def guarded_send(self, request):
    host = urllib.parse.urlsplit(request.url).hostname
    if host != "127.0.0.1":
        LEFT_LOOPBACK.append(request.url)
        raise RuntimeError("refused: %s is not the loopback" % host)
    return _orig_send(self, request)


botocore.httpsession.URLLib3Session.send = guarded_send
LOADER = botocore.loaders.create_loader()


def run_reference(c):
    """botocore plus the CLI's precedence: what the AWS CLI v2 would sign with."""
    env = dict(base_env(), **c.env)
    env = nonempty_env(env)  # the CLI (and hpnode) read an empty variable as unset
    prof = c.flags.get("profile")
    if not prof:
        name = env.get("AWS_PROFILE") or env.get("AWS_DEFAULT_PROFILE")
        env.pop("AWS_DEFAULT_PROFILE", None)
        if name:
            env["AWS_PROFILE"] = name
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if region:
        env["AWS_DEFAULT_REGION"] = region
    os.environ.clear()
    os.environ.update(env)
    del RECORDS[:]
    del LEFT_LOOPBACK[:]
    err = None
    try:
        s = botocore.session.Session(profile=prof) if prof else botocore.session.Session()
        s.register_component("data_loader", LOADER)
        if c.flags.get("region"):
            s.set_config_variable("region", c.flags["region"])
        conf = Config(retries={"max_attempts": 1, "mode": "standard"})
        kw = {"config": conf}
        if c.flags.get("endpoint"):
            kw["endpoint_url"] = c.flags["endpoint"]
        s.create_client("sts", **kw).get_caller_identity()
        s.create_client("ec2", **kw).describe_security_groups(GroupIds=["sg-0a1b2c3d"])
    except Exception as e:  # noqa: BLE001 - any failure is an outcome
        err = "%s: %s" % (type(e).__name__, str(e)[:200])
    return list(RECORDS), err, bool(LEFT_LOOPBACK)


def run_hpnode(c):
    env = dict(base_env(), **c.env)
    cmd = [args.hpnode, "efa-sg", "--sg-id", "sg-0a1b2c3d"]
    for flag in ("profile", "region"):
        if c.flags.get(flag):
            cmd += ["--" + flag, c.flags[flag]]
    if c.flags.get("endpoint"):
        cmd += ["--endpoint-url", c.flags["endpoint"]]
    del RECORDS[:]
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
        rc, err = p.returncode, p.stderr.strip().splitlines()[-1:] or [""]
    except subprocess.TimeoutExpired:
        rc, err = -1, ["timed out"]
    return list(RECORDS), rc, err[0][:300]


def documented(c):
    """The deliberate differences (README, "AWS configuration") this case falls in."""
    env = nonempty_env(c.env)
    out = []
    if "AWS_SECRET_ACCESS_KEY" in env and "AWS_ACCESS_KEY_ID" not in env and \
            "profile" not in c.flags:
        out.append("half-set keys in the environment are an error")
    if "AWS_ROLE_ARN" in env and "AWS_WEB_IDENTITY_TOKEN_FILE" not in env and \
            "profile" not in c.flags:
        out.append("AWS_ROLE_ARN without AWS_WEB_IDENTITY_TOKEN_FILE is an error")
    return out


def main():
    rnd = random.Random(args.seed)
    agree = skipped = signed = 0
    bad = []
    n = 0
    classes = {}
    saved = dict(os.environ)
    while n < args.count:
        corner = CORNERS[n % len(CORNERS)] if n < 4 * len(CORNERS) else None
        c = generate(n, random.Random(rnd.random()), corner)
        write_case(c)
        ref, ref_err, left = run_reference(c)
        os.environ.clear()
        os.environ.update(saved)
        if left:
            skipped += 1
            if skipped > 10 * args.count:
                print("not ok - too many cases would leave the loopback")
                return 1
            continue
        write_case(c)  # a refresh may have rewritten the token cache
        got, rc, herr = run_hpnode(c)
        docs = documented(c)
        ok = got == ref
        if ok and not ref and ref_err and "services" in ref_err and \
                "does not exist" in ref_err and rc != 2:
            ok = False  # a missing [services] section is a configuration error: exit 2
        if not ok and docs and not got:
            # A deliberate difference: hpnode refuses (signs nothing) where botocore goes on.
            ok = True
            for d in docs:
                classes[d] = classes.get(d, 0) + 1
        if ok:
            agree += 1
            signed += bool(got)
        else:
            bad.append((c, ref, ref_err, got, rc, herr, docs))
        n += 1
    for c, ref, ref_err, got, rc, herr, docs in bad[:args.show]:
        print("# case %d disagrees%s" % (c.n, " (documented: %s)" % docs if docs else ""))
        print("#   flags %s" % c.flags)
        print("#   env %s" % {k: v for k, v in c.env.items() if k not in ("HOME",)})
        print("#   config:\n#     " + render(c.config, "\n").replace("\n", "\n#     "))
        print("#   credentials:\n#     " + render(c.creds, "\n").replace("\n", "\n#     "))
        print("#   sso cache %s" % {k: (d["expiresAt"], "refreshToken" in d)
                                    for k, d in c.sso_cache.items()})
        print("#   botocore: %s %s" % (ref, ref_err or ""))
        print("#   hpnode:   %s (exit %d) %s" % (got, rc, herr))
    print("# %d cases (seed %d): %d agree (%d signed the same calls, %d refused by both), "
          "%d disagree, %d not run (botocore would leave the loopback)"
          % (n, args.seed, agree, signed, agree - signed, len(bad), skipped))
    for d, k in sorted(classes.items()):
        print("# documented difference: %s: %d cases" % (d, k))
    return 1 if bad else 0


sys.exit(main())
