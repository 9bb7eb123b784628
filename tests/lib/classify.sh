# tests/lib/classify.sh - a history with releases and a stable trailer
# convention, for the classify tests (after lib.sh and lib/history.sh).
#
#   classify_repo   in $R: rounds of features in drv/*/ (a release tag
#                   v1.N after each round), fixes of shipped features with
#                   `Cc: stable@vger.kernel.org` (labelled yes), fixes of
#                   features of the same round before its release
#                   (unshipped bugs, no Cc), docs tidy-ups; then three
#                   unlabelled commits of today to classify: $SHIPPED (a fix of a
#                   bug in v1.3), $UNSHIPPED (a fix of a feature added
#                   after the last release) and $FEATURE
#   fixline ID      the Fixes: line for commit ID

fixline() {
	printf 'Fixes: %s ("%s")\n' "$(git -C "$R" rev-parse --short=12 "$1")" \
		"$(git -C "$R" log -1 --format=%s "$1")"
}

_cl_feature() { # DRV N: add drv/DRV/fN.c; prints the commit id
	tick
	mkdir -p "drv/$1"
	c_function "f$2" "helper$2" 6 >"drv/$1/f$2.c"
	git add "drv/$1/f$2.c"
	git commit -q -m "$1: add support for feature $2" \
		-m "Feature $2 lets users of $1 do more."
	git rev-parse HEAD
}

_cl_fix() { # DRV N BUG STABLE: fix drv/DRV/fN.c, naming BUG
	tick
	printf '/* checked %s */\n' "$2" >>"drv/$1/f$2.c"
	if [ "$4" = yes ]; then
		cc="Cc: stable@vger.kernel.org"
	else
		cc="Reviewed-by: R E Viewer <r@example.org>"
	fi
	git commit -q -am "$1: fix crash in feature $2" \
		-m "Feature $2 dereferenced a NULL pointer when the device went away." \
		-m "$(fixline "$3")
$cc
Signed-off-by: A U Thor <author@example.org>"
	git rev-parse HEAD
}

classify_repo() {
	# Ten days a commit: stable labels ripen (ripe-days) within it.
	CLOCK_STEP=864000
	CLOCK_START=$(($(date +%s) - 200 * CLOCK_STEP))
	history_repo
	tick
	echo "readme" >README
	git add README && git commit -q -m "initial"
	n=0
	for round in 1 2 3 4 5 6 7 8; do
		feats=
		for drv in alpha beta gamma delta; do
			n=$((n + 1))
			feats="$feats $drv:$n:$(_cl_feature $drv $n)"
		done
		# A bug found before the release: fixed, nothing shipped it.
		set -- $feats
		f=$1
		_cl_fix "$(echo "$f" | cut -d: -f1)" "$(echo "$f" | cut -d: -f2)" \
			"$(echo "$f" | cut -d: -f3)" no >/dev/null
		tick
		echo "round $round" >>README
		git commit -q -am "docs: tidy up the README for round $round"
		git tag "v1.$round"
		# Bugs in what shipped: fixed, and Cc'd to stable.
		for f in $2 $3; do
			_cl_fix "$(echo "$f" | cut -d: -f1)" \
				"$(echo "$f" | cut -d: -f2)" \
				"$(echo "$f" | cut -d: -f3)" yes >/dev/null
		done
		tick
		echo "more $round" >>README
		git commit -q -am "docs: spelling in the README"
	done
	# The commits to classify: new, so not yet ripe (ripe-days) for
	# counting as no in the training rows.
	CLOCK_START=$(($(date +%s) - 86400 - CLOCK_N * 3600))
	CLOCK_STEP=3600
	SHIPPED=$(_cl_fix beta 26 "$(git log --format=%H --grep='add support for feature 26$' -1)" no)
	NEWFEAT=$(_cl_feature alpha 40)
	UNSHIPPED=$(_cl_fix alpha 40 "$NEWFEAT" no)
	FEATURE=$(_cl_feature beta 41)
	cd "$TMP"
}

# test_expect_code N CMD...: CMD exits with status N
test_expect_code() {
	_tec_want=$1
	shift
	"$@"
	_tec_got=$?
	if [ "$_tec_got" != "$_tec_want" ]; then
		echo "test_expect_code: $* exited $_tec_got, not $_tec_want" >&2
		return 1
	fi
	return 0
}
