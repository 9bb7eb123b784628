#!/bin/sh
# Optional embeddings: with [history] embeddings-url, quorum index gives
# every hunk a vector from an OpenAI-compatible /v1/embeddings endpoint
# (here a real HTTP server on 127.0.0.1 run by this test), similar
# combines them with BM25, and an endpoint that fails or lies leaves the
# lexical search working, with a warning.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
command -v sqlite3 >/dev/null 2>&1 || skip_all "sqlite3 not installed"

cat >"$TMP/embed.py" <<'EOP'
import hashlib, http.server, json, re, sys
state = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with open(state + "/requests", "a") as f:
            f.write("%s %d\n" % (body.get("model"), len(body["input"])))
        mode = open(state + "/mode").read().strip()
        if mode == "fail":
            self.send_response(500); self.end_headers(); return
        data = []
        for i, text in enumerate(body["input"]):
            v = [0.0] * 64
            for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]+", text):
                v[int(hashlib.md5(w.encode()).hexdigest(), 16) % 64] += 1.0
            data.append({"index": i, "embedding": v})
        out = json.dumps({"data": data}).encode()
        if mode == "junk":
            out = b'{"data": [{"embedding": "nope"}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(state + "/port", "w").write(str(s.server_port))
s.serve_forever()
EOP
echo ok >"$TMP/mode"
python3 "$TMP/embed.py" "$TMP" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$TMP"' EXIT
i=0
while [ ! -s "$TMP/port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$TMP/port" ] || { echo "Bail out! the fake embeddings server did not start"; exit 1; }
PORT=$(cat "$TMP/port")

. "$TOP/tests/lib/history.sh"
history_repo
cat >net.c <<'EOC'
int parse_opts(struct opts *o, const char *arg)
{
	size_t arg_len = strlen(arg);

	memcpy(o->name, arg, arg_len);
	o->mtu = parse_mtu_value(arg, arg_len);
	return 0;
}
EOC
git add net.c && git commit -q -m "net: parse the interface name"
BUG=$(git rev-parse HEAD)
net_c_fix
git commit -q -am "net: bound the name copy" -m "$(fixes "$BUG")"
FIX=$(git rev-parse HEAD)
cat >>net.c <<'EOC'

int parse_alias(struct opts *o, const char *arg)
{
	size_t arg_len = strlen(arg);

	memcpy(o->name, arg, arg_len);
	return 1;
}
EOC
git commit -q -am "net: parse aliases"
git format-patch -q -1 --stdout >"$TMP/tip.patch"
sqlq() { sqlite3 "$R/.git/quorum/history.db" "$1"; }

export QUORUM_CONFIG=$TMP/config
printf '[history]\n\tembeddings-url = http://127.0.0.1:%s/v1/embeddings\n\tembeddings-model = fake-1\n' "$PORT" >"$QUORUM_CONFIG"

run "$QUORUM" index -C "$R"
is "$rc" 0 "index with embeddings exits 0"
hunks=$(sqlq "SELECT COUNT(*) FROM hunks")
like "$TMP/out" "embedding vectors: $hunks of $hunks hunks" "every hunk gets a vector"
is "$(sqlq "SELECT COUNT(*) FROM vectors WHERE length(v) = 64 * 4")" "$hunks" "vectors are stored as float32 blobs"
like "$TMP/requests" '^fake-1 ' "the configured model is asked"

: >"$TMP/requests"
run "$QUORUM" similar -C "$R" HEAD
is "$rc" 0 "similar with embeddings exits 0"
like "$TMP/out" "fix  $(git rev-parse --short=12 "$FIX")" "similar finds the pair"
is "$(lines "$TMP/requests")" 1 "one request embeds the patch"
is "$(lines "$TMP/err")" 0 "no warning"

# The endpoint fails: similar stays lexical, with a warning.
echo fail >"$TMP/mode"
run "$QUORUM" similar -C "$R" HEAD
is "$rc" 0 "endpoint failing: similar exits 0"
like "$TMP/out" "fix  $(git rev-parse --short=12 "$FIX")" "... and still finds the pair lexically"
like "$TMP/err" 'embeddings unavailable.*HTTP 500' "... with a warning that says why"

# It lies: malformed vectors are refused, not trusted.
echo junk >"$TMP/mode"
run "$QUORUM" similar -C "$R" HEAD
is "$rc" 0 "endpoint sending junk: similar exits 0"
like "$TMP/err" 'embeddings unavailable.*(malformed|not a number)' "... junk is named"

# New hunks while the endpoint is down: the index is still updated,
# and the next run fills in the missing vectors.
echo fail >"$TMP/mode"
sed -i 's/o->mtu = parse_mtu_value(arg, arg_len);/o->mtu = parse_mtu_value(arg, (int)arg_len);/' net.c
git commit -q -am "net: cast the length" -m "$(fixes "$BUG")"
run "$QUORUM" index -C "$R"
is "$rc" 0 "endpoint down: index still exits 0"
like "$TMP/err" 'embeddings skipped' "... and warns"
ok "$([ "$(sqlq "SELECT COUNT(*) FROM vectors")" -lt "$(sqlq "SELECT COUNT(*) FROM hunks")" ]; echo $?)" "the new hunks have no vector yet"
echo ok >"$TMP/mode"
run "$QUORUM" index -C "$R"
hunks=$(sqlq "SELECT COUNT(*) FROM hunks")
like "$TMP/out" "embedding vectors: $hunks of $hunks hunks" "the endpoint back: the missing vectors are filled in"

# Another model: vectors of the old one do not compare and are replaced.
sed -i 's/fake-1/fake-2/' "$QUORUM_CONFIG"
: >"$TMP/requests"
run "$QUORUM" index -C "$R"
is "$(sqlq "SELECT value FROM meta WHERE key='embed_model'")" fake-2 "the new model is recorded"
is "$(awk '{ n += $2 } END { print n }' "$TMP/requests")" "$hunks" "every hunk is embedded again"

# review and ci ground their history voter in the same index: both ask
# the configured endpoint for the patch's vectors (ci used to forget).
: >"$TMP/requests"
run "$QUORUM" review -C "$R" --base HEAD~1 "$TMP/tip.patch"
ok "$([ "$(lines "$TMP/requests")" -ge 1 ]; echo $?)" "review asks the embeddings endpoint"
: >"$TMP/requests"
run "$QUORUM" ci -C "$R" --range HEAD~1..HEAD
is "$rc" 0 "ci with embeddings exits 0 ($(head -1 "$TMP/err"))"
ok "$([ "$(lines "$TMP/requests")" -ge 1 ]; echo $?)" "ci asks the embeddings endpoint too"
unset QUORUM_CONFIG
: >"$TMP/requests"
run "$QUORUM" ci -C "$R" --range HEAD~1..HEAD
is "$(lines "$TMP/requests")" 0 "ci without the config asks nothing"
export QUORUM_CONFIG=$TMP/config

# watch reviews a list's series with the same history index, so with
# the embeddings too (it used to open the index without them).
if command -v notmuch >/dev/null 2>&1; then
	MAIL=$TMP/mail
	mkdir -p "$MAIL/cur" "$MAIL/new" "$MAIL/tmp"
	printf '[database]\npath=%s\n[new]\ntags=new\n' "$MAIL" >"$TMP/nmconfig"
	git -C "$R" format-patch -q -1 --base=HEAD~1 --to=devel@lists.example.org \
		-o "$TMP/wpatch"
	cp "$TMP"/wpatch/*.patch "$MAIL/new/1.eml"
	NOTMUCH_CONFIG=$TMP/nmconfig notmuch new >/dev/null 2>&1
	cp "$QUORUM_CONFIG" "$TMP/wconfig"
	printf '[notmuch]\n\tdatabase = %s\n[list "devel"]\n\taddress = devel@lists.example.org\n\trepo = %s\n[deliver]\n\toutbox = %s\n[watch]\n\tstate = %s\n' \
		"$MAIL" "$R" "$TMP/outbox" "$TMP/state.db" >>"$TMP/wconfig"
	: >"$TMP/requests"
	QUORUM_CONFIG=$TMP/wconfig NOTMUCH_CONFIG=$TMP/nmconfig run "$QUORUM" watch --once
	like "$TMP/out" "1 reviewed" "watch reviews the list's series ($(head -1 "$TMP/err"))"
	ok "$([ "$(lines "$TMP/requests")" -ge 1 ]; echo $?)" "watch asks the embeddings endpoint too"
fi

# No embeddings configured: nothing is asked.
unset QUORUM_CONFIG
: >"$TMP/requests"
run "$QUORUM" similar -C "$R" HEAD
is "$(lines "$TMP/requests")" 0 "without the config no request is made"

done_testing
