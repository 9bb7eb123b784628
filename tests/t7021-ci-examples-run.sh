#!/bin/sh
# contrib/ci/: run the review scripts of the GitHub Actions and GitLab CI
# examples, as those services would, on a local clone: a push, a new
# branch, a force push and a pull/merge request each review the right
# commits and leave a valid SARIF (and JSON) file. Only the install steps
# (apt-get, cloning quorum) and the upload are left out.
. "$(dirname "$0")/lib.sh"

python3 -c 'import yaml' 2>/dev/null || skip_all "python3 yaml module not installed"
command -v bash >/dev/null || skip_all "bash is needed (both services run bash)"

# `quorum` on PATH, as the examples' install steps leave it.
mkdir -p "$TMP/bin"
ln -s "$QUORUM" "$TMP/bin/quorum"

make_repo "$TMP/up"
git -C "$TMP/up" branch -M main
git clone -q "$TMP/up" "$TMP/work"
W=$TMP/work
git -C "$W" checkout -q -b feat
commit_sum_ids "$W"
C1=$(git -C "$W" rev-parse HEAD)
commit_item_new "$W"
C2=$(git -C "$W" rev-parse HEAD)
MAIN=$(git -C "$W" rev-parse origin/main)
ZERO=0000000000000000000000000000000000000000

# The GitHub workflow's review step, with the ${{ }} expressions of an
# event filled in: KEY=VALUE arguments.
github_script() {
	python3 - "$TOP/contrib/ci/github-actions.yml" "$@" <<'EOP'
import re, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
ctx = dict(a.split("=", 1) for a in sys.argv[2:])
steps = d["jobs"]["review"]["steps"]
(step,) = [s for s in steps if s.get("name") == "Review the pushed range"]
def sub(m):
    return ctx.get(m.group(1).strip(), "")
print(re.sub(r"\$\{\{(.*?)\}\}", sub, step["run"]))
EOP
}

# Run the GitHub step for an event; $rc, $TMP/out, $TMP/err, quorum.sarif.
github_run() {
	rm -f "$W/quorum.sarif"
	github_script "$@" >"$TMP/gh.sh"
	(cd "$W" && PATH=$TMP/bin:$PATH bash -e "$TMP/gh.sh") >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

sarif_results() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == "2.1.0"
print(len(d["runs"][0]["results"]))
' "$W/quorum.sarif"
}

GH="github.repository=x/y github.event.repository.default_branch=main"
(cd "$W" && PATH=$TMP/bin:$PATH quorum index >/dev/null 2>&1)
github_run $GH github.event_name=push github.sha=$C2 github.event.before=$C1
is "$rc" 0 "GitHub push: the step passes (a medium finding, --fail-on high)"
like "$TMP/out" "^reviewing $C1\\.\\.$C2\$" "GitHub push: the pushed commits"
like "$TMP/err" '1 commit reviewed' "GitHub push: one commit reviewed"
is "$(sarif_results)" 1 "GitHub push: SARIF with the finding"

github_run $GH github.event_name=push github.sha=$C2 github.event.before=$ZERO
is "$rc" 0 "GitHub new branch: the step passes"
like "$TMP/out" "^reviewing $MAIN\\.\\.$C2\$" "GitHub new branch: what main does not have"
like "$TMP/err" '2 commits reviewed' "GitHub new branch: both commits"

github_run $GH github.event_name=push github.sha=$C2 \
	github.event.before=1234567890123456789012345678901234567890
is "$rc" 0 "GitHub force push (before is gone): the step passes"
like "$TMP/out" "^reviewing $MAIN\\.\\.$C2\$" "GitHub force push: what main does not have"

github_run $GH github.event_name=pull_request github.sha=deadbeef \
	github.event.pull_request.base.sha=$MAIN github.event.pull_request.head.sha=$C2
is "$rc" 0 "GitHub pull request: the step passes"
like "$TMP/out" "^reviewing $MAIN\\.\\.$C2\$" "GitHub pull request: base..head"
is "$(sarif_results)" 1 "GitHub pull request: SARIF with the finding"

# With .github/quorum.conf it is used: a quorum of 2, which the offline
# voters alone can never meet, is named in a warning (each offline voter
# is its own quorum, so the finding still shows).
mkdir -p "$W/.github"
printf '[review]\n\tquorum = 2\n' >"$W/.github/quorum.conf"
github_run $GH github.event_name=push github.sha=$C2 github.event.before=$C1
is "$rc" 0 "GitHub with .github/quorum.conf: the step passes"
like "$TMP/err" 'review\.quorum = 2 \(\.github/quorum\.conf:2\) can never be met' "GitHub: the project's config is read"
is "$(sarif_results)" 1 "GitHub: the quorum the voters can meet still shows the finding"
rm -r "$W/.github"

# The GitLab job's script, in one bash as the runner runs it.
python3 - "$TOP/contrib/ci/gitlab-ci.yml" >"$TMP/gl.sh" <<'EOP'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print("\n".join(d["quorum"]["script"]))
EOP
gitlab_run() {
	rm -f "$W/quorum.sarif" "$W/quorum.json"
	(cd "$W" && env PATH=$TMP/bin:$PATH CI_DEFAULT_BRANCH=main "$@" \
		bash -e -o pipefail "$TMP/gl.sh") >"$TMP/out" 2>"$TMP/err"
	rc=$?
}
json_commits() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(c for r in d["reviews"] for c in r["commits"]))
' "$W/quorum.json"
}

gitlab_run CI_COMMIT_SHA=$C2 CI_COMMIT_BEFORE_SHA=$C1
is "$rc" 0 "GitLab push: the job passes"
is "$(json_commits)" "$C2" "GitLab push: the pushed commit in quorum.json"
is "$(sarif_results)" 1 "GitLab push: quorum.sarif with the finding"

gitlab_run CI_COMMIT_SHA=$C2 CI_COMMIT_BEFORE_SHA=$ZERO
is "$rc" 0 "GitLab new branch: the job passes"
is "$(json_commits)" "$C1 $C2" "GitLab new branch: what main does not have"

gitlab_run CI_COMMIT_SHA=$C2 CI_COMMIT_BEFORE_SHA=$C1 CI_MERGE_REQUEST_DIFF_BASE_SHA=$MAIN
is "$rc" 0 "GitLab merge request: the job passes"
is "$(json_commits)" "$C1 $C2" "GitLab merge request: diff base..head"

# A high finding fails the job (--fail-on high), the reports are kept.
cat >>"$W/main.c" <<'EOC'

void item_drop(struct item *it)
{
	free(it);
	it->id = 0;
}
EOC
git -C "$W" commit -q -am "main: add item_drop()"
C3=$(git -C "$W" rev-parse HEAD)
gitlab_run CI_COMMIT_SHA=$C3 CI_COMMIT_BEFORE_SHA=$C2
is "$rc" 1 "GitLab: a high finding (use after free) fails the job"
ok "$([ -s "$W/quorum.json" ] && [ -s "$W/quorum.sarif" ]; echo $?)" "GitLab: both reports are written for the artifacts"
like "$W/quorum.json" '"severity":[[:space:]]*"high"' "GitLab: the JSON holds the high finding"
github_run $GH github.event_name=push github.sha=$C3 github.event.before=$C2
is "$rc" 1 "GitHub: a high finding fails the step"
is "$(sarif_results)" 1 "GitHub: the SARIF to upload (if: always()) is written"

done_testing
