#!/usr/bin/env python3
# recur.py - make recurrences of past bugs for bench-recurrence.sh.
#
# For each fix commit listed on stdin (one id a line) in the repository
# of the current directory: the fix's largest C hunk's pre-image (its
# context and removed lines: the buggy code) is posted again as a new
# file elsewhere, as a patch mail, in three variants:
#   a  as is;
#   b  every name renamed (variables, fields, types, functions, macros),
#      except C keywords, libc, and the tree's API: functions called from
#      3 or more files at HEAD (another driver calls those too);
#   c  renamed, and one line changed (removed, added or edited in turn).
# Writes DIR/<variant>/<n>.mbox and DIR/list (n fix-id), n from 1.
import hashlib
import os
import re
import subprocess
import sys

KEYWORDS = set("""auto break case char const continue default do double else
enum extern float for goto if inline int long register return short signed
sizeof static struct switch typedef union unsigned void volatile while bool
true false NULL size_t ssize_t uint8_t uint16_t uint32_t uint64_t int8_t
int16_t int32_t int64_t __u8 __u16 __u32 __u64 __s8 __s16 __s32 __s64
__be16 __be32 __be64 __le16 __le32 __le64 u8 u16 u32 u64 off_t FILE errno
__attribute__""".split())
LIBC = set("""malloc calloc realloc free strdup strndup memcpy memmove memset
memcmp strcpy strncpy strcat strncat strlen strnlen strcmp strncmp strcasecmp
strchr strrchr strstr strtok strtol strtoul strtoull strtoll atoi atol sprintf
snprintf vsnprintf printf fprintf sscanf fopen fclose fread fwrite fgets fputs
open close read write socket bind connect send recv sendmsg recvmsg ioctl mmap
munmap getenv exit abort assert perror qsort asprintf getline opendir readdir
closedir stderr stdout stdin""".split())
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|//.*|/\*.*?\*/|'
                   r"[A-Za-z_][A-Za-z0-9_]*|\d[\w.]*|.", re.S)


def git(*args):
    return subprocess.run(["git"] + list(args), capture_output=True,
                          check=True).stdout.decode("utf-8", "replace")


def tree_api():
    """Functions called from 3 or more .c files at HEAD."""
    files = {}
    for path in git("ls-files", "*.c").split("\n"):
        if not path:
            continue
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        for name in set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", text)):
            files[name] = files.get(name, 0) + 1
    return {n for n, c in files.items() if c >= 3}


def pre_image(fix):
    """The pre-image of the fix's C hunk with the most removed lines."""
    diff = git("show", "--format=", "-U3", fix, "--", "*.c")
    best, cur = None, None
    for line in diff.split("\n"):
        if line.startswith("@@"):
            cur = {"pre": [], "minus": 0}
            best = best or cur
            continue
        if cur is None or line.startswith(("+++", "---", "diff ", "index ")):
            if line.startswith("diff "):
                cur = None
            continue
        if line.startswith(" ") or line.startswith("-"):
            cur["pre"].append(line[1:])
            cur["minus"] += line.startswith("-")
        if best is not cur and (cur["minus"], len(cur["pre"])) > \
                (best["minus"], len(best["pre"])):
            best = cur
    return best["pre"] if best else []


def code_line(s):
    """A line of code with two names or more outside strings."""
    t = re.sub(r'"(?:\\.|[^"\\])*"', '""', s.strip())
    return len(t) > 3 and not t.startswith(("/*", "*", "//", "#")) and \
        len(IDENT.findall(t)) >= 2


def rename(lines, keep):
    out = []
    for line in lines:
        toks = TOKEN.findall(line)
        new = []
        for i, t in enumerate(toks):
            if IDENT.fullmatch(t) and t not in KEYWORDS and t not in LIBC:
                rest = "".join(toks[i + 1:]).lstrip()
                if not (rest.startswith("(") and t in keep):
                    t = "r" + hashlib.md5(t.encode()).hexdigest()[:6]
            new.append(t)
        out.append("".join(new))
    return out


def change_one(lines, n):
    idx = [i for i, s in enumerate(lines) if code_line(s)]
    if not idx:
        return lines
    i = idx[len(idx) // 2]
    lines = list(lines)
    op = n % 3
    if op == 0:
        del lines[i]
    elif op == 1:
        indent = re.match(r"\s*", lines[i]).group(0)
        lines.insert(i + 1, indent + "rq_extra_count++;")
    else:
        s = lines[i].rstrip()
        lines[i] = s[:-1] + " + 1;" if s.endswith(";") else s + " /* x */ + 1"
    return lines


def mbox(path, n, lines):
    body = "".join("+" + s + "\n" for s in lines)
    return ("From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
            "From: Bench <bench@example.org>\n"
            "Date: Mon, 1 Jan 2024 00:00:00 +0000\n"
            "Subject: [PATCH] recur: add %s\n"
            "Message-Id: <recur-%d@example.org>\n\n"
            "New code.\n---\n"
            "diff --git a/%s b/%s\nnew file mode 100644\n"
            "--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n%s"
            "-- \n2.40.0\n\n") % (path, n, path, path, path, len(lines), body)


def main():
    out = sys.argv[1]
    want = int(sys.argv[2]) if len(sys.argv) > 2 else 150
    keep = tree_api()
    for v in "abc":
        os.makedirs(os.path.join(out, v), exist_ok=True)
    fixes = [l.strip() for l in sys.stdin if l.strip()]
    fixes.sort(key=lambda f: hashlib.md5(f.encode()).hexdigest())
    n = 0
    with open(os.path.join(out, "list"), "w") as lst:
        for fix in fixes:
            if n >= want:
                break
            pre = pre_image(fix)
            if len(pre) < 6 or sum(map(code_line, pre)) < 4:
                continue
            n += 1
            path = "contrib/recur/recur%d.c" % n
            ren = rename(pre, keep)
            for v, lines in (("a", pre), ("b", ren),
                             ("c", change_one(ren, n))):
                with open(os.path.join(out, v, "%d.mbox" % n), "w") as f:
                    f.write(mbox(path, n, lines))
            lst.write("%d %s\n" % (n, fix))


if __name__ == "__main__":
    main()
