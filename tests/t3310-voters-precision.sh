#!/bin/sh
# The offline voters stay quiet where a match or a rule cannot tell a bug
# from correct code, and still speak on the bug itself. Each case is a
# misfire measured on real history (iproute2, rdma-core) with quorum eval.
. "$(dirname "$0")/lib.sh"

CLOCK_START=1500000000 CLOCK_STEP=$((86400 * 5))
. "$TOP/tests/lib/history.sh"

history_repo

# review PATCHDIR: quorum review of that one patch, then back to base.
review() {
	run "$QUORUM" review -C "$R" "$TMP/$1"/*.patch
}
# patch NAME SUBJECT: format the last commit into $TMP/NAME, reset to base.
patch() {
	tick; git commit -q -am "$2"
	git format-patch -q -o "$TMP/$1" -1 HEAD
	git reset -q --hard base
}

# 1. A typo bug (`=` for `==`) and its fix; the fixed line is the
# resemblance. A patch that writes the fixed line again repeats the fix,
# not the bug (iproute2 96303c25eee6 and two more: "resembles code that
# f7dd7e5e713d had to fix" on `family == AF_MPLS`).
cat >prefix.c <<'EOC'
#include "utils.h"

int get_prefix(struct inet_prefix *dst, char *arg, int family)
{
	if ((family == AF_DECnet) || (family = AF_MPLS))
		return parse_special_prefix(dst, arg, family);
	dst->bytelen = compute_prefix_bytes(arg, family);
	dst->bitlen = compute_prefix_bits(arg, family);
	return 0;
}
EOC
tick; git add prefix.c && git commit -q -m "utils: parse MPLS prefixes"
TYPO=$(git rev-parse HEAD)
sed -i 's/(family = AF_MPLS)/(family == AF_MPLS)/' prefix.c
tick; git commit -q -am "utils: fix typo in get_prefix()" \
	-m "An assignment where a comparison was meant made every family MPLS.

$(fixes "$TYPO")"
TYPO_FIX=$(git rev-parse HEAD)

# 2. A dump function that prints every record with the same line; a later
# fix changed one record's format, not the line (rdma-core
# 571249f8c220: five commits flagged for adding a dump line like it).
cat >dump.c <<'EOC'
#include "dump.h"

int dump_action(FILE *f, struct action *action, uint64_t id)
{
	int ret;

	switch (action->type) {
	case ACTION_FT:
		ret = fprintf(f, "%d,0x%" PRIx64 ",0x%x\n",
			      REC_ACTION_FT, id, action->table->object_id);
		break;
	case ACTION_QP:
		ret = fprintf(f, "%d,0x%" PRIx64 ",0x%x\n",
			      REC_ACTION_QP, id, action->qp->qp_num);
		break;
	case ACTION_CTR:
		ret = fprintf(f, "%d,0x%" PRIx64 ",0x%x\n",
			      REC_ACTION_CTR, id, action->ctr->object_id);
		break;
	default:
		return 0;
	}
	return ret < 0 ? ret : 0;
}
EOC
tick; git add dump.c && git commit -q -m "dump: add the action dump"
DUMP=$(git rev-parse HEAD)
python3 - <<'EOP'
s = open("dump.c").read()
s = s.replace('''		ret = fprintf(f, "%d,0x%" PRIx64 ",0x%x\\n",
			      REC_ACTION_FT, id, action->table->object_id);''',
'''		ret = fprintf(f, "%d,0x%" PRIx64 ",0x%x,0x%" PRIx64 "\\n",
			      REC_ACTION_FT, id, action->table->object_id,
			      (uint64_t)(uintptr_t)action->table);''')
open("dump.c", "w").write(s)
EOP
tick; git commit -q -am "dump: add the table handle to the FT action" \
	-m "The parser needs the handle to find the table.

$(fixes "$DUMP")"
git tag base

# The patches under review.
cat >>prefix.c <<'EOC'

int get_addr(struct inet_prefix *dst, char *arg, int family)
{
	if ((family == AF_DECnet) || (family == AF_MPLS))
		return parse_special_prefix(dst, arg, family);
	dst->bytelen = compute_prefix_bytes(arg, family);
	dst->bitlen = compute_prefix_bits(arg, family);
	return 1;
}
EOC
patch fixed "utils: add get_addr()"
cat >>prefix.c <<'EOC'

int get_addr(struct inet_prefix *dst, char *arg, int family)
{
	if ((family == AF_DECnet) || (family = AF_MPLS))
		return parse_special_prefix(dst, arg, family);
	dst->bytelen = compute_prefix_bytes(arg, family);
	dst->bitlen = compute_prefix_bits(arg, family);
	return 1;
}
EOC
patch typo "utils: add get_addr() with the old typo"
python3 - <<'EOP'
s = open("dump.c").read()
s = s.replace('''	default:''', '''	case ACTION_VPORT:
		ret = fprintf(f, "%d,0x%" PRIx64 ",0x%x\\n",
			      REC_ACTION_VPORT, id, action->vport->num);
		break;
	default:''')
open("dump.c", "w").write(s)
EOP
patch vport "dump: dump the vport action"

run "$QUORUM" index -C "$R"
is "$rc" 0 "index"

review fixed
unlike "$TMP/out" "had to fix" "a patch writing the fixed line (==) has no history finding"
review typo
like "$TMP/out" "resembles code that $(git rev-parse --short=12 "$TYPO_FIX") had to fix" \
	"the same function with the typo (=) still has one"
like "$TMP/out" 'The fix changed this line: if \(\(family == AF_DECnet\) \|\| \(family =$' \
	"... quoting the buggy line"
review vport
unlike "$TMP/out" "had to fix" "a new dump line like the ones the fix left alone has no history finding"

done_testing
