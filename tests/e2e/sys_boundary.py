"""The hp_sys boundary (include/hp/sys.h): outside the real table
(src/util/sys.c, sys-proc.c, sys-tls.c, sys-file.c) no C file in the tree given calls
what reaches the outside world itself: files, processes, sockets and TLS,
the clock, the environment, signals, the terminal. The exceptions sys.h
lists are allowed by file and call. Prints each offending call as
FILE:LINE: NAME and exits 1 when there is one.

usage: sys_boundary.py SRC_DIR
"""
import os
import re
import sys

CALLS = """
fopen freopen fdopen open openat creat popen pclose system fork vfork forkpty
execl execlp execle execv execvp execvpe execve posix_spawn posix_spawnp
clock_gettime gettimeofday time getenv secure_getenv setenv unsetenv putenv
mkstemp mkostemp mkdtemp tmpfile unlink remove rename stat lstat fstat access
opendir readdir chdir socket connect bind listen accept getaddrinfo
curl_easy_init curl_easy_perform curl_easy_send curl_easy_recv curl_global_init
SSL_connect SSL_read SSL_write sigaction signal kill raise isatty ttyname
nanosleep usleep sleep poll select waitpid wait pipe pipe2 dup2 ioctl
""".split()

# The real table.
REAL = {"util/sys.c", "util/sys-proc.c", "util/sys-tls.c", "util/sys-file.c"}
# What sys.h says stays outside, and why: (file, call).
ALLOWED = {
    ("cli/cmd-common.c", "sigaction"),   # the frame's SIGINT/SIGTERM handler
    ("cli/cmd-report.c", "isatty"),      # colour on a terminal
    ("cli/cmd-diff.c", "isatty"),        # colour on a terminal
    ("cli/cmd-triage.c", "isatty"),      # progress lines on a terminal
    ("cli/cmd-nccl.c", "isatty"),        # progress lines on a terminal
    ("checks/registry.c", "clock_gettime"),  # the check phase timed (JUnit suite times)
    ("cli/cmd-watch.c", "lstat"),        # the state directory made without following links
}

CALL_RE = re.compile(r"(?<![\w.>])(%s)\s*\(" % "|".join(CALLS))


def strip(text):
    """C text without comments, string and character literals (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def main():
    root = sys.argv[1]
    bad = 0
    for d, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if not f.endswith(".c"):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, root)
            if rel in REAL:
                continue
            text = strip(open(path, encoding="utf-8", errors="replace").read())
            for no, line in enumerate(text.split("\n"), 1):
                for m in CALL_RE.finditer(line):
                    if (rel, m.group(1)) not in ALLOWED:
                        print("%s:%d: %s" % (rel, no, m.group(1)))
                        bad = 1
    sys.exit(bad)


main()
